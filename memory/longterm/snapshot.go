package longterm

import (
	"context"
)

// maybeSnapshot writes a snapshot when WithSnapshotEvery's count of
// records since the last one is reached, so that a process that is killed
// rather than closed does not leave a long log tail to replay (and
// re-tokenise) on the next Open. m.wmu must be held; searches go on. A
// failure is logged, not returned: the records are safe in the log.
func (m *Memory) maybeSnapshot(ctx context.Context) {
	if m.log == nil || m.opts.snapshotEvery <= 0 || m.applied < m.opts.snapshotEvery {
		return
	}
	if err := m.snapshotLocked(ctx, false); err != nil {
		m.opts.logger.Warn("longterm: automatic snapshot failed", "dir", m.dir, "err", err)
	}
}

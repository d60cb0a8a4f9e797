package longterm

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// commitReq is one AddBatch call waiting for its records to be committed.
type commitReq struct {
	ctx   context.Context
	preps []prepared
	done  chan struct{} // closed when ids and err are set
	lead  chan struct{} // closed when the call is to commit the queue
	ids   []string
	err   error
	// finished is set with done's closing, by the leader (under wmu).
	finished bool
}

// commit writes the records to the log and applies them to the indexes.
// Concurrent calls share one log write and one fsync (group commit): each
// call queues its records; one call at a time, the leader, commits every
// queued call, in queue order, and hands the lead to the first call queued
// meanwhile, if any. The others only wait for their result (they do not
// each take the writer lock to find it). Log order and index order stay
// the same, and a record is searchable only once it is durable.
func (m *Memory) commit(ctx context.Context, preps []prepared) ([]string, error) {
	req := &commitReq{ctx: ctx, preps: preps, done: make(chan struct{}), lead: make(chan struct{})}
	m.qmu.Lock()
	m.queue = append(m.queue, req)
	lead := !m.committing
	m.committing = true
	m.qmu.Unlock()
	if !lead {
		select {
		case <-req.done: // committed by the leader
			return req.ids, req.err
		case <-req.lead:
		}
	}
	m.wmu.Lock()
	defer m.handOff()
	m.qmu.Lock()
	batch := m.queue
	m.queue = nil
	m.qmu.Unlock()
	// A panic (a backend's bug, say) must not leave the calls this one
	// commits for waiting forever: they fail, the memory refuses writes
	// from then on, and the panic goes on up this call's stack.
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("longterm: a write panicked (%v); writes are refused until the memory is reopened", p)
			m.failed.Store(&err)
			for _, r := range batch {
				if !r.finished {
					r.finished, r.err = true, err
					close(r.done)
				}
			}
			panic(p)
		}
	}()
	m.commitLocked(batch)
	m.maybeSnapshot(ctx)
	return req.ids, req.err
}

// Err returns why the memory refuses writes, or nil: a write that
// panicked (a bug, in a backend say) may have left part of itself in the
// indexes, so from then on writes and snapshots fail with this error, and
// reads go on. Reopening the store replays its log, which holds every
// acknowledged write. A server reports it as unhealthy.
func (m *Memory) Err() error {
	if p := m.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// handOff ends a leader's turn: it releases the writer lock and passes the
// lead to the first call queued meanwhile, if any.
func (m *Memory) handOff() {
	m.wmu.Unlock()
	m.qmu.Lock()
	defer m.qmu.Unlock()
	if len(m.queue) > 0 {
		close(m.queue[0].lead)
	} else {
		m.committing = false
	}
}

// payloadSize is an upper bound of the size of p's log payload
// (appendAdd): its strings and vectors plus room for the varints.
func payloadSize(p *prepared) int {
	r := &p.rec
	n := 64 + len(r.ID) + len(r.Namespace) + len(r.Speaker) + len(r.Text) + len(p.code.b) + len(p.chunks)*(3*binary.MaxVarintLen64+1)
	for _, t := range r.Tags {
		n += binary.MaxVarintLen64 + len(t)
	}
	for _, c := range p.chunks {
		n += binary.MaxVarintLen64 + len(c.Text) // a child whose text is not its span's
	}
	return n
}

// commitLocked commits the queued calls in batch with one log append and
// one fsync, and sets each call's result. m.wmu must be held.
func (m *Memory) commitLocked(batch []*commitReq) {
	finish := func(r *commitReq, ids []string, err error) {
		r.ids, r.err, r.finished = ids, err, true
		close(r.done)
	}
	if err := m.Err(); err != nil {
		for _, r := range batch {
			finish(r, nil, err)
		}
		return
	}
	m.mu.RLock()
	closed, next := m.closed, m.nextChild
	m.mu.RUnlock()
	type part struct {
		r        *commitReq
		adds     []*addRecord
		payloads [][]byte // the adds' frames, then the duplicates'
		next     int64    // next child id after the part
	}
	res := resolver{m: m, now: time.Now().UTC()}
	var parts []part
	// The log payloads of the whole batch share one buffer, sized up front:
	// appending a record's vectors float by float into a growing slice
	// cost more than the rest of the encoding.
	var buf []byte
	if m.log != nil {
		size := 0
		for _, r := range batch {
			for i := range r.preps {
				size += payloadSize(&r.preps[i])
			}
		}
		buf = make([]byte, 0, size)
	}
	for _, r := range batch {
		if closed {
			finish(r, nil, ErrClosed)
			continue
		}
		if err := r.ctx.Err(); err != nil {
			finish(r, nil, err)
			continue
		}
		if err := res.resolve(r.preps); err != nil {
			finish(r, nil, err)
			continue
		}
		if err := m.upgradeFor(r.preps); err != nil {
			finish(r, nil, err)
			continue
		}
		pt := part{r: r, adds: make([]*addRecord, 0, len(r.preps))}
		var seen [][]byte
		for i := range r.preps {
			p := &r.preps[i]
			if p.dupOf != "" {
				if m.log != nil {
					start := len(buf)
					buf = encodeSeen(buf, p.dupOf, res.now)
					seen = append(seen, buf[start:len(buf):len(buf)])
				}
				continue
			}
			a := &addRecord{rec: p.rec, dim: m.dim, children: make([]logChild, len(p.chunks))}
			for j, c := range p.chunks {
				a.children[j] = logChild{id: next, start: c.Start, end: c.End, text: c.Text}
				next++
			}
			pt.adds = append(pt.adds, a)
			if m.log != nil {
				start := len(buf)
				buf = appendAdd(buf, &a.rec, a.children, p.code)
				pt.payloads = append(pt.payloads, buf[start:len(buf):len(buf)])
			}
		}
		pt.payloads = append(pt.payloads, seen...)
		pt.next = next
		parts = append(parts, pt)
	}
	// Append every part, then apply them in order. A part that the indexes
	// refuse (e.g. a Faiss IVF index that cannot train on so few vectors)
	// is undone in the indexes and cut from the log with every part after
	// it; the later parts are appended again. So an error means the part
	// is stored nowhere, and success that it is durable and searchable.
	for len(parts) > 0 {
		offs := make([][]int64, len(parts))
		if m.log != nil {
			var all [][]byte
			for _, pt := range parts {
				all = append(all, pt.payloads...)
			}
			flat, err := m.log.append(all, m.opts.sync)
			if err != nil {
				for _, pt := range parts {
					finish(pt.r, nil, err)
				}
				return
			}
			k := 0
			for i, pt := range parts {
				offs[i] = flat[k : k+len(pt.adds)]
				k += len(pt.payloads)
			}
		}
		rest := []part(nil)
		for i, pt := range parts {
			o := offs[i]
			if o == nil {
				o = make([]int64, len(pt.adds))
				for j := range o {
					o[j] = -1
				}
			}
			ids, err := m.applyAll(pt.r.ctx, pt.adds, o, pt.next, added(pt.r.preps))
			if err == nil {
				finish(pt.r, m.applySeen(pt.r.preps, ids, res.now), nil)
				continue
			}
			if m.log != nil {
				if terr := m.log.truncate(o[0]); terr != nil {
					m.log.broken = terr
					err = fmt.Errorf("%w; cutting it from the log failed too, so the log may hold it: %v", err, terr)
					for _, later := range parts[i+1:] {
						finish(later.r, nil, fmt.Errorf("longterm: not stored: %w", terr))
					}
					finish(pt.r, nil, err)
					return
				}
			}
			finish(pt.r, nil, err)
			rest = parts[i+1:]
			break
		}
		parts = rest
	}
}

// added returns the records of preps that are stored (not duplicates),
// in order: those applyAll applies.
func added(preps []prepared) []prepared {
	out := preps
	for i := range preps {
		if preps[i].dupOf != "" {
			out = make([]prepared, 0, len(preps))
			for j := range preps {
				if preps[j].dupOf == "" {
					out = append(out, preps[j])
				}
			}
			break
		}
	}
	return out
}

// applySeen counts the duplicates among preps as seen again at t, and
// returns the ids of all of preps, in order: the stored records' ids
// (stored, from applyAll) and the duplicates' originals.
func (m *Memory) applySeen(preps []prepared, stored []string, t time.Time) []string {
	if len(stored) == len(preps) {
		return stored
	}
	ids := make([]string, len(preps))
	m.mu.Lock()
	defer m.mu.Unlock()
	k := 0
	for i := range preps {
		if id := preps[i].dupOf; id != "" {
			ids[i] = id
			m.seen(id, t)
			m.applied++
			continue
		}
		ids[i] = stored[k]
		k++
	}
	return ids
}

// upgradeFor makes the store format 2 (upgradeFormat) if one of preps
// needs it: a record with validity or versions, or a duplicate.
func (m *Memory) upgradeFor(preps []prepared) error {
	for i := range preps {
		if preps[i].dupOf != "" || hasFacts(&preps[i].rec) {
			return m.upgradeFormat()
		}
	}
	return nil
}

package window_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/memory/window/tokens"
)

func TestTrack_StepsAndSummary(t *testing.T) {
	tr, err := window.NewTrack()
	require.NoError(t, err)
	assert.True(t, tr.Empty())
	assert.Empty(t, tr.Summary())

	tr.SetTask("migrate the users table")
	a, err := tr.Begin("add columns", "ALTER TABLE users ADD status")
	require.NoError(t, err)
	require.NoError(t, tr.Finish(a, window.Done, "columns added"))
	b, err := tr.Begin("backfill status", "batches of 10k")
	require.NoError(t, err)
	require.NoError(t, tr.Try(b, "one big UPDATE"))
	require.NoError(t, tr.Try(b, "batches of 10k"))
	tr.SetPosition("backfill at 40%")

	assert.Equal(t, `Task: migrate the users table
#1 [done] add columns — ALTER TABLE users ADD status → columns added
#2 [in progress] backfill status — batches of 10k (tried: one big UPDATE; batches of 10k)
Now: backfill at 40%`, tr.Summary())

	steps := tr.Steps()
	require.Len(t, steps, 2)
	steps[1].Tried[0] = "changed"
	assert.Equal(t, "one big UPDATE", tr.Steps()[1].Tried[0], "Steps returns copies")
}

func TestTrack_BadInput(t *testing.T) {
	tr, err := window.NewTrack(window.WithMaxSteps(2))
	require.NoError(t, err)
	_, err = tr.Begin("  ", "x")
	require.ErrorIs(t, err, window.ErrInvalidStep)
	_, err = tr.Add(window.Step{Goal: "g", Status: "maybe"})
	require.ErrorIs(t, err, window.ErrInvalidStep)
	require.ErrorIs(t, tr.Finish(42, window.Done, ""), window.ErrUnknownStep)
	id, err := tr.Begin("g", "")
	require.NoError(t, err)
	require.ErrorIs(t, tr.Finish(id, window.InProgress, ""), window.ErrInvalidStep)
	require.ErrorIs(t, tr.Try(id, ""), window.ErrInvalidStep)
	_, err = tr.Begin("h", "")
	require.NoError(t, err)
	_, err = tr.Begin("i", "")
	require.ErrorIs(t, err, window.ErrTrackFull, "steps in progress never collapse")

	_, err = window.NewTrack(window.WithMaxSteps(0))
	require.ErrorIs(t, err, window.ErrInvalidOption)
	_, err = window.NewTrack(window.WithTrackTokens(1))
	require.ErrorIs(t, err, window.ErrInvalidOption)
}

func TestTrack_OldFinishedStepsCollapse(t *testing.T) {
	tr, err := window.NewTrack(window.WithMaxSteps(3))
	require.NoError(t, err)
	open, err := tr.Begin("keep the service up", "watch dashboards")
	require.NoError(t, err)
	for i := 1; i <= 6; i++ {
		status := window.Done
		if i == 4 {
			status = window.Failed
		}
		_, err := tr.Add(window.Step{Goal: fmt.Sprintf("step %d", i), Status: status})
		require.NoError(t, err)
	}
	steps := tr.Steps()
	require.Len(t, steps, 3)
	assert.Equal(t, open, steps[0].ID, "the step in progress stays, however old")
	assert.Equal(t, "step 5", steps[1].Goal)
	assert.Equal(t, `#1 [in progress] keep the service up — watch dashboards
Earlier: 3 done, 1 failed (step 1; step 2; step 3; step 4 ✗)
#6 [done] step 5
#7 [done] step 6`, reorder(tr.Summary()))
	assert.Contains(t, tr.Summary(), "Earlier: 3 done, 1 failed (step 1; step 2; step 3; step 4 ✗)", "collapsed into one line, not vanished")
}

// reorder moves the Earlier line first, as Summary prints it, for the
// comparison above to read in step order.
func reorder(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 1 && strings.HasPrefix(lines[0], "Earlier:") {
		lines[0], lines[1] = lines[1], lines[0]
	}
	return strings.Join(lines, "\n")
}

func TestTrack_SummaryWithinTokenCap(t *testing.T) {
	tr, err := window.NewTrack(window.WithMaxSteps(50), window.WithTrackTokens(window.MinTokens))
	require.NoError(t, err)
	for i := range 30 {
		_, err := tr.Add(window.Step{Goal: fmt.Sprintf("check shard %d of the cluster", i), Action: "ran the health probe", Status: window.Done})
		require.NoError(t, err)
	}
	open, err := tr.Begin(strings.Repeat("an extremely long goal ", 30), "")
	require.NoError(t, err)
	s := tr.Summary()
	assert.LessOrEqual(t, tokens.Estimate(s), window.MinTokens)
	assert.Contains(t, s, "Earlier: 30 done", "finished steps collapsed first")
	assert.Contains(t, s, "…[truncated", "then the text was cut with a marker")
	assert.Equal(t, open, tr.Steps()[0].ID)
}

func TestTrack_StateRoundTrip(t *testing.T) {
	tr, _ := window.NewTrack(window.WithMaxSteps(2))
	tr.SetTask("t")
	for i := range 4 {
		_, _ = tr.Add(window.Step{Goal: fmt.Sprint("g", i), Status: window.Done})
	}
	tr.SetPosition("p")
	tr2, _ := window.NewTrack(window.WithMaxSteps(2))
	require.NoError(t, tr2.Restore(tr.State()))
	assert.Equal(t, tr.Summary(), tr2.Summary())
	id, err := tr2.Begin("next", "")
	require.NoError(t, err)
	assert.Equal(t, 5, id, "IDs continue after a restore")
}

func TestTrack_Concurrent(t *testing.T) {
	tr, _ := window.NewTrack(window.WithMaxSteps(4))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 30 {
				id, err := tr.Begin(fmt.Sprint("g", g, i), "")
				if err != nil {
					assert.ErrorIs(t, err, window.ErrTrackFull)
					continue
				}
				_ = tr.Try(id, "x")
				_ = tr.Finish(id, window.Done, "ok")
				_ = tr.Summary()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, len(tr.Steps()), 4)
}

func ExampleTrack() {
	tr, _ := window.NewTrack(window.WithMaxSteps(2))
	tr.SetTask("ship release 1.4")
	id, _ := tr.Begin("run the test suite", "make test")
	_ = tr.Finish(id, window.Done, "all green")
	id, _ = tr.Begin("tag the release", "git tag v1.4.0")
	_ = tr.Finish(id, window.Failed, "tag exists")
	id, _ = tr.Begin("tag the release", "git tag v1.4.1")
	_ = tr.Try(id, "git tag v1.4.0")
	tr.SetPosition("waiting for CI on v1.4.1")
	fmt.Println(tr.Summary())
	// Output:
	// Task: ship release 1.4
	// Earlier: 1 done, 0 failed (run the test suite)
	// #2 [failed] tag the release — git tag v1.4.0 → tag exists
	// #3 [in progress] tag the release — git tag v1.4.1 (tried: git tag v1.4.0)
	// Now: waiting for CI on v1.4.1
}

package longterm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDuring_MatchesScan: a namespace's records in a time range, found
// through its time order, are those a scan of its records finds, while
// records are added in and out of time order and forgotten, whether or
// not a search built the order before.
func TestDuring_MatchesScan(t *testing.T) {
	ctx := t.Context()
	m, err := New(ctx, newCounting(t, 32))
	require.NoError(t, err)
	defer m.Close()
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time { return base.Add(time.Duration(r.IntN(20*24)) * time.Hour) }
	next := 0
	check := func(step string) {
		t.Helper()
		ns := m.turnIdx().get("a", m)
		v := &nsView{m: m, name: "a", n: ns}
		for range 20 {
			from := at()
			to := from.Add(time.Duration(r.IntN(72)) * time.Hour)
			var want []int64
			for id, p := range ns.parents {
				if !p.rec.Time.Before(from) && p.rec.Time.Before(to) {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			got, err := v.During(ctx, from, to, len(ns.parents)+1)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s: [%v, %v)", step, from, to)
			if len(want) > 2 {
				few, err := v.During(ctx, from, to, 2)
				require.NoError(t, err)
				assert.Len(t, few, 2, step)
				assert.Subset(t, want, few, step)
			}
		}
	}
	add := func(n int, inOrder bool) {
		for range n {
			tm := at()
			if inOrder {
				tm = base.Add(time.Duration(20*24+next) * time.Hour)
			}
			_, err := m.Add(ctx, Record{ID: fmt.Sprint("r", next), Namespace: "a", Time: tm, Text: fmt.Sprint("note ", next)})
			require.NoError(t, err)
			next++
		}
	}
	add(50, false)
	check("built by the first search")
	add(30, true)
	check("appended in order")
	add(30, false)
	check("inserted out of order")
	for i := 0; i < next; i += 7 {
		require.NoError(t, m.Forget(ctx, fmt.Sprint("r", i)))
	}
	check("after forgetting")
	add(20, false)
	check("rebuilt")
}

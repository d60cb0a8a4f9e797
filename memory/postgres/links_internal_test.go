package postgres

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/engine"
)

// A link table finds every seq it holds, and no other, whether its seqs
// are consecutive, evenly spread (namespaces written in turns) or
// anywhere.
func TestLinkTableFind(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := map[string]func(i int) int64{
		"consecutive": func(i int) int64 { return 1000 + int64(i) },
		"every tenth": func(i int) int64 { return 7 + 10*int64(i) },
		"random gaps": func(int) int64 { return 1 + r.Int64N(40) },
	}
	for name, seq := range shapes {
		for _, n := range []int{1, 2, 5, 100, 3000} {
			links := map[int64]engine.Link{}
			at := int64(0)
			for i := range n {
				if name == "random gaps" {
					at += seq(i)
				} else {
					at = seq(i)
				}
				links[at] = engine.Link{Episode: at * 3}
			}
			table := newLinkTable(links)
			lo, hi := table.seqs[0], table.last()
			for s := lo - 3; s <= hi+3; s++ {
				want, ok := links[s]
				got := table.at(s)
				if !ok {
					require.Nil(t, got, "%s, %d seqs: %d is not there", name, n, s)
					continue
				}
				require.NotNil(t, got, "%s, %d seqs: %d", name, n, s)
				require.Equal(t, want.Episode, got.Episode)
				require.Equal(t, slices.Index(table.seqs, s), table.find(s))
			}
		}
	}
}

package postgres

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/memory/engine"
)

// Past cacheLimit a cache lets the postings it read term by term go
// first, keeping its links; still past it, it is let go (full). All the
// postings, read at once (allPost), are never let go alone.
func TestCacheRoomLetsPostingsGoFirst(t *testing.T) {
	old := cacheLimit.Swap(10)
	defer cacheLimit.Store(old)
	c := newCache(nsVersion{xmin: "1"})
	c.links = map[int64]engine.Link{1: {}, 2: {}, 3: {}}
	c.complete = true
	c.room(3)
	c.addPostings([]string{"a", "b"}, map[string][]posting{"a": {{seq: 1}, {seq: 2}}, "b": nil})
	require.Equal(t, 7, c.held)
	require.Equal(t, 4, c.postHeld)
	require.Len(t, c.post, 2)

	// Five more postings pass the bound: a and b go, c stays.
	c.addPostings([]string{"c"}, map[string][]posting{"c": {{seq: 1}, {seq: 2}, {seq: 3}, {seq: 4}}})
	require.Equal(t, map[string][]posting{"c": {{seq: 1}, {seq: 2}, {seq: 3}, {seq: 4}}}, c.post)
	require.Equal(t, 8, c.held)
	require.Equal(t, 5, c.postHeld)
	require.Len(t, c.links, 3)
	require.True(t, c.complete)
	require.False(t, c.full.Load())

	// Links past the bound with no postings left to let go: full.
	c.room(8)
	require.Zero(t, c.postHeld)
	require.Empty(t, c.post)
	require.True(t, c.full.Load())

	// A cache holding all the postings lets none go.
	all := newCache(nsVersion{xmin: "2"})
	all.post, all.allPost = map[string][]posting{"a": {{seq: 1}}}, true
	all.room(20)
	require.Len(t, all.post, 1)
	require.True(t, all.full.Load())
}

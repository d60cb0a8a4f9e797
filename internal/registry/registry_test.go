package registry

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistry(t *testing.T) {
	r := New[int]("pkg", "thing")
	assert.Empty(t, r.Names())
	_, ok := r.Get("b")
	assert.False(t, ok)

	r.Register("b", 2)
	r.Register("a", 1)
	assert.Equal(t, []string{"a", "b"}, r.Names(), "sorted")
	v, ok := r.Get("b")
	require.True(t, ok)
	assert.Equal(t, 2, v)
	assert.PanicsWithValue(t, "pkg: Register called twice for thing a", func() { r.Register("a", 3) })
	v, _ = r.Get("a")
	assert.Equal(t, 1, v, "a second registration changes nothing")
}

func TestRegistryConcurrent(t *testing.T) {
	r := New[int]("pkg", "thing")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r.Register(string(rune('a'+i)), i)
			_ = r.Names()
			_, _ = r.Get("a")
		})
	}
	wg.Wait()
	assert.Len(t, r.Names(), 8)
}

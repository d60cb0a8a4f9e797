package vdbtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/vdb"
)

func (s *suite) testUseAfterClose(t *testing.T) {
	const dim = 8
	ctx, db, r := s.start(t, dim)
	vs := randVecs(r, 2, dim)
	require.NoError(t, db.Add(ctx, []int64{1}, vs[:1]))
	require.NoError(t, db.Close(), "rule: Close succeeds")
	require.NoError(t, db.Close(), "rule: Close is idempotent")
	msg := "rule: every method returns ErrClosed after Close"
	assert.ErrorIs(t, db.Add(ctx, []int64{2}, vs[1:]), vdb.ErrClosed, msg+" (Add)")
	_, err := db.Search(ctx, vs[0], 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (Search)")
	_, err = db.Delete(ctx, 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (Delete)")
	_, err = vdb.SearchMinScore(ctx, db, vs[0], 1, 0)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (SearchMinScore)")
	_, err = vdb.SearchBatch(ctx, db, vs, 1)
	assert.ErrorIs(t, err, vdb.ErrClosed, msg+" (SearchBatch)")
	if p, ok := db.(vdb.Persister); ok {
		assert.ErrorIs(t, p.Export(ctx, new(discard)), vdb.ErrClosed, msg+" (Export)")
		assert.ErrorIs(t, p.Import(ctx, new(emptyReader)), vdb.ErrClosed, msg+" (Import)")
	}
	// Len and Dim must not panic.
	_ = db.Len()
	_ = db.Dim()
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

type emptyReader struct{}

func (*emptyReader) Read([]byte) (int, error) {
	return 0, errors.New("vdbtest: Import read from a closed database")
}

func (s *suite) testConcurrentAddSearch(t *testing.T) {
	ctx := t.Context()
	const dim, writers, readers, per = 16, 3, 3, 60
	db := s.newDB(t, dim)
	errs := make(chan error, writers+readers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range per {
				id := int64(w*per + i)
				if err := db.Add(ctx, []int64{id}, randVecs(r, 1, dim)); err != nil {
					errs <- fmt.Errorf("Add %d: %w", id, err)
					return
				}
			}
		})
	}
	for rd := range readers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 7))
			for range per {
				res, err := db.Search(ctx, randVecs(r, 1, dim)[0], 5)
				if err != nil {
					errs <- fmt.Errorf("Search: %w", err)
					return
				}
				if len(res) > 5 {
					errs <- fmt.Errorf("Search returned %d > k results", len(res))
					return
				}
				_ = db.Len()
			}
		})
	}
	if !s.cfg.noDelete {
		wg.Go(func() {
			for i := range per {
				if _, err := db.Delete(ctx, int64(i)); err != nil {
					errs <- fmt.Errorf("Delete: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("rule: a VectorDatabase is safe for concurrent use: %v", err)
	}
	// Writer 0's IDs may have been added after their delete; all others are present.
	assert.GreaterOrEqual(t, db.Len(), (writers-1)*per, "rule: concurrent Adds are all stored")
	assert.LessOrEqual(t, db.Len(), writers*per)
	r := rand.New(rand.NewPCG(1, 9))
	res, err := db.Search(ctx, randVecs(r, 1, dim)[0], writers*per)
	require.NoError(t, err)
	assert.Len(t, res, db.Len(), "rule: after concurrent use, Search sees every stored vector")
	checkOrdered(t, res)
}

func (s *suite) testContextCancelled(t *testing.T) {
	const dim = 8
	db := s.newDB(t, dim)
	r := rand.New(rand.NewPCG(1, 2))
	vs := randVecs(r, 2, dim)
	require.NoError(t, db.Add(t.Context(), []int64{1}, vs[:1]))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := "rule: a cancelled context fails the call with an error wrapping context.Canceled, before any work"
	assert.ErrorIs(t, db.Add(ctx, []int64{2}, vs[1:]), context.Canceled, msg+" (Add)")
	assert.Equal(t, 1, db.Len(), msg+" (Add stored a vector)")
	_, err := db.Search(ctx, vs[0], 1)
	assert.ErrorIs(t, err, context.Canceled, msg+" (Search)")
	_, err = vdb.SearchMinScore(ctx, db, vs[0], 1, 0)
	assert.ErrorIs(t, err, context.Canceled, msg+" (SearchMinScore)")
	_, err = vdb.SearchBatch(ctx, db, vs, 1)
	assert.ErrorIs(t, err, context.Canceled, msg+" (SearchBatch)")
	_, err = db.Delete(ctx, 1)
	if !(s.cfg.noDelete && errors.Is(err, errors.ErrUnsupported)) {
		assert.ErrorIs(t, err, context.Canceled, msg+" (Delete)")
	}
	assert.Equal(t, 1, db.Len(), msg+" (Delete removed a vector)")
	if p, ok := db.(vdb.Persister); ok {
		assert.ErrorIs(t, p.Export(ctx, new(discard)), context.Canceled, msg+" (Export)")
		assert.ErrorIs(t, p.Import(ctx, new(emptyReader)), context.Canceled, msg+" (Import)")
		assert.Equal(t, 1, db.Len(), msg+" (Import changed the database)")
	}
}

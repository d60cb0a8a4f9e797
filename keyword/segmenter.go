package keyword

import (
	"errors"
	"sync"
)

// A WordCutter is a dictionary segmenter for [Segmenter] mode.
type WordCutter interface {
	// CutSearch cuts text into words and the dictionary words inside them.
	CutSearch(text string, hmm ...bool) []string
}

// segmenterLoad is the registered segmenter's loader, run once.
var (
	segmenterMu   sync.RWMutex
	segmenterLoad func() (WordCutter, error)
)

// RegisterSegmenter makes [Segmenter] mode available with the segmenter
// load returns; load runs once, on first use or in [Preload]. The package
// github.com/agentmem/agentmem/keyword/gse registers gse's simplified-
// Chinese segmenter when imported, so a program that never asks for
// Segmenter mode links neither gse nor its ~33 MB of dictionaries.
// Registering twice panics, as database/sql's Register does.
func RegisterSegmenter(load func() (WordCutter, error)) {
	segmenterMu.Lock()
	defer segmenterMu.Unlock()
	if load == nil {
		panic("keyword: RegisterSegmenter with a nil loader")
	}
	if segmenterLoad != nil {
		panic("keyword: RegisterSegmenter called twice")
	}
	segmenterLoad = sync.OnceValues(load)
}

// segmenter returns the registered segmenter, loading it on first use;
// errors.ErrUnsupported if none is registered.
func segmenter() (WordCutter, error) {
	segmenterMu.RLock()
	load := segmenterLoad
	segmenterMu.RUnlock()
	if load == nil {
		return nil, errors.ErrUnsupported
	}
	return load()
}

// segmenterRegistered reports whether Segmenter mode is available.
func segmenterRegistered() bool {
	segmenterMu.RLock()
	defer segmenterMu.RUnlock()
	return segmenterLoad != nil
}

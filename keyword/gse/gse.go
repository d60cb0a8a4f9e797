// Package gse registers the gse dictionary segmenter (github.com/go-ego/gse,
// simplified-Chinese dictionary) for keyword's Segmenter mode. Import it for
// its side effect:
//
//	import _ "github.com/agentmem/agentmem/keyword/gse"
//
// and ask for keyword.WithCJK(keyword.Segmenter). The dictionary is loaded
// once per process, on first use or in keyword.Preload, and shared: a loaded
// gse.Segmenter only reads it (TestTokens_Concurrent checks it under -race).
package gse

import (
	"fmt"

	gose "github.com/go-ego/gse"

	"github.com/agentmem/agentmem/keyword"
)

func init() {
	keyword.RegisterSegmenter(load)
}

// Dict is the gse dictionary loaded: zh_s, simplified Chinese. Adding the
// traditional one ("zh") costs ~60% more load time and heap
// (BenchmarkSegmenterLoad) for text rarely seen, and unknown words still go
// through gse's HMM.
const Dict = "zh_s"

func load() (keyword.WordCutter, error) {
	seg := &gose.Segmenter{SkipLog: true}
	if err := seg.LoadDictEmbed(Dict); err != nil {
		return nil, fmt.Errorf("keyword/gse: load dictionary %s: %w", Dict, err)
	}
	return seg, nil
}

//go:build !nogse

package keyword

import (
	"fmt"
	"sync"

	"github.com/go-ego/gse"
)

// segmenterBuilt reports whether this build includes gse (see WithCJK).
const segmenterBuilt = true

// segmenter is the process-wide gse segmenter, loaded on first use. A
// loaded gse.Segmenter only reads its dictionary, so one is shared by all
// tokenizers and goroutines (TestTokens_Concurrent checks it under -race).
var segmenter = sync.OnceValues(func() (wordCutter, error) {
	seg := &gse.Segmenter{SkipLog: true}
	// zh_s is the simplified-Chinese dictionary; adding the traditional
	// one ("zh") costs ~60% more load time and heap (BenchmarkSegmenterLoad)
	// for text we rarely see, and unknown words still go through gse's HMM.
	if err := seg.LoadDictEmbed("zh_s"); err != nil {
		return nil, fmt.Errorf("keyword: load gse dictionary: %w", err)
	}
	return seg, nil
})

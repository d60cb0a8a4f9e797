//go:build nogse

package keyword

import "errors"

// segmenterBuilt reports whether this build includes gse (see WithCJK).
const segmenterBuilt = false

func segmenter() (wordCutter, error) {
	return nil, errors.ErrUnsupported
}

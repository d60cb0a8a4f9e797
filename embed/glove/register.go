package glove

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/embed"
)

// The scheme "glove:PATH[?weight=sif|idf|mean&pc=1|0&a=A]" of embed.Open.
func init() { embed.Register("glove", open) }

var (
	loadedMu sync.Mutex
	loaded   = map[string]*Vectors{} // path → vectors: a file is read once per process
)

func open(arg string) (embed.Embedder, error) {
	path, query, _ := strings.Cut(strings.TrimSpace(arg), "?")
	if path == "" {
		return nil, fmt.Errorf("%w: glove needs a vector file, e.g. glove:/data/glove.6B.100d.txt", embed.ErrBadSpec)
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%w: glove options %q: %w", embed.ErrBadSpec, query, err)
	}
	opts := []Option{WithName(baseName(path))}
	for k, vs := range params {
		val := vs[len(vs)-1]
		switch k {
		case "weight":
			w, ok := map[string]Weighting{"sif": SIF, "idf": IDF, "mean": Mean}[val]
			if !ok {
				return nil, fmt.Errorf("%w: glove weight=%q (want sif, idf or mean)", embed.ErrBadSpec, val)
			}
			opts = append(opts, WithWeighting(w))
		case "pc":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, fmt.Errorf("%w: glove pc=%q (want 1 or 0)", embed.ErrBadSpec, val)
			}
			opts = append(opts, WithCommonComponent(b))
		case "a":
			a, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: glove a=%q is not a number", embed.ErrBadSpec, val)
			}
			opts = append(opts, WithSIFA(a))
		default:
			return nil, fmt.Errorf("%w: glove option %q (want weight, pc or a)", embed.ErrBadSpec, k)
		}
	}
	v, err := loadOnce(path)
	if err != nil {
		return nil, err
	}
	e, err := New(v, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", embed.ErrBadSpec, err)
	}
	return e, nil
}

func loadOnce(path string) (*Vectors, error) {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if v := loaded[path]; v != nil {
		return v, nil
	}
	v, err := Load(path)
	if err != nil {
		return nil, err
	}
	loaded[path] = v
	return v, nil
}

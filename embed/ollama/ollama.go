// Package ollama embeds texts with a model served by Ollama
// (https://ollama.com), through its /api/embed endpoint and the official
// client, github.com/ollama/ollama/api.
//
// The server address comes from OLLAMA_HOST (default http://127.0.0.1:11434)
// unless [WithHost] or [WithClient] says otherwise. Texts are sent in batches
// ([WithBatchSize]); the vector length is learned from the first answer and
// enforced afterwards; vectors are checked (finite, non-zero) and
// L2-normalised.
//
// Errors say what to do: a model the server does not have wraps
// [embed.ErrModelNotFound] and says "run `ollama pull MODEL`"; a server that
// does not answer wraps [embed.ErrUnreachable] and names its address; a
// cancelled context wraps the context's error.
//
// Some models embed search queries and stored documents differently (nomic-embed-text
// wants "search_query: " and "search_document: " prefixes). [Embedder.Embed]
// adds the document prefix and [Embedder.EmbedQuery] the query prefix;
// [DefaultPrefixes] knows the prefixes of common models and [WithPrefixes]
// sets others.
package ollama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"github.com/agentmem/agentmem/embed"
)

// DefaultBatchSize is the number of texts sent in one request unless
// [WithBatchSize] says otherwise.
const DefaultBatchSize = 64

// An Option configures an [Embedder] in [New].
type Option func(*config) error

type config struct {
	client     *api.Client
	host       *url.URL
	httpClient *http.Client
	batchSize  int
	prefixes   *[2]string // query, document; nil: DefaultPrefixes(model)
	keepAlive  *api.Duration
	dimensions int
}

// WithClient makes the embedder use c instead of a client built from
// OLLAMA_HOST. It cannot be combined with WithHost or WithHTTPClient.
// Errors then name the address of the failed request when there is one.
func WithClient(c *api.Client) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("ollama: WithClient(nil)")
		}
		cfg.client = c
		return nil
	}
}

// WithHost sets the server address instead of OLLAMA_HOST, e.g.
// "http://gpu-box:11434" or "gpu-box:11434" (http is assumed).
func WithHost(rawURL string) Option {
	return func(cfg *config) error {
		s := strings.TrimSpace(rawURL)
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("ollama: host %q: %w", rawURL, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("ollama: host %q: want http[s]://HOST[:PORT]", rawURL)
		}
		cfg.host = u
		return nil
	}
}

// WithHTTPClient sets the HTTP client used to reach the server (default
// http.DefaultClient), e.g. for a proxy or custom TLS settings. Deadlines
// are better set through the context passed to Embed.
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("ollama: WithHTTPClient(nil)")
		}
		cfg.httpClient = c
		return nil
	}
}

// WithBatchSize sets how many texts one request carries (default
// DefaultBatchSize); larger inputs are split into several requests.
func WithBatchSize(n int) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("ollama: batch size %d, want ≥ 1", n)
		}
		cfg.batchSize = n
		return nil
	}
}

// WithPrefixes sets the text put before search queries ([Embedder.EmbedQuery])
// and before stored documents ([Embedder.Embed]), replacing
// [DefaultPrefixes]. WithPrefixes("", "") sends texts unchanged.
func WithPrefixes(query, document string) Option {
	return func(cfg *config) error {
		cfg.prefixes = &[2]string{query, document}
		return nil
	}
}

// WithKeepAlive sets how long the server keeps the model loaded after a
// request (Ollama's keep_alive; the server's default is 5 minutes; a
// negative duration keeps it loaded indefinitely).
func WithKeepAlive(d time.Duration) Option {
	return func(cfg *config) error {
		cfg.keepAlive = &api.Duration{Duration: d}
		return nil
	}
}

// WithDimensions asks the server to truncate vectors to n dimensions (for
// models trained for it, e.g. Matryoshka embeddings). Dim then reports n
// before the first request, and answers of another length are an error.
func WithDimensions(n int) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("ollama: dimensions %d, want ≥ 1", n)
		}
		cfg.dimensions = n
		return nil
	}
}

// DefaultPrefixes returns the query and document prefixes a model is known
// to want, or empty strings. The model's tag and namespace are ignored:
// "nomic-embed-text:v1.5" is "nomic-embed-text".
func DefaultPrefixes(model string) (query, document string) {
	base := model
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	base, _, _ = strings.Cut(base, ":")
	switch strings.ToLower(base) {
	case "nomic-embed-text":
		return "search_query: ", "search_document: "
	case "mxbai-embed-large", "snowflake-arctic-embed", "snowflake-arctic-embed2":
		return "Represent this sentence for searching relevant passages: ", ""
	}
	return "", ""
}

// An Embedder embeds texts with an Ollama model. It is safe for concurrent
// use by multiple goroutines.
type Embedder struct {
	model     string
	client    *api.Client
	host      string // for messages; "" when unknown (WithClient)
	batchSize int
	query     string // prefix of queries
	document  string // prefix of documents
	keepAlive *api.Duration
	request   int          // dimensions asked of the server, 0: model's own
	dim       atomic.Int64 // learned from the first answer (or request)
}

// New returns an embedder for model (e.g. "nomic-embed-text"). It does not
// contact the server: a missing model or an unreachable server shows at the
// first Embed (use [embed.Dimension] to find out early).
func New(model string, opts ...Option) (*Embedder, error) {
	model = strings.TrimSpace(model)
	if model == "" {
		return nil, errors.New("ollama: empty model name")
	}
	cfg := config{batchSize: DefaultBatchSize}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	e := &Embedder{
		model:     model,
		batchSize: cfg.batchSize,
		keepAlive: cfg.keepAlive,
		request:   cfg.dimensions,
	}
	e.query, e.document = DefaultPrefixes(model)
	if cfg.prefixes != nil {
		e.query, e.document = cfg.prefixes[0], cfg.prefixes[1]
	}
	switch {
	case cfg.client != nil:
		if cfg.host != nil || cfg.httpClient != nil {
			return nil, errors.New("ollama: WithClient cannot be combined with WithHost or WithHTTPClient")
		}
		e.client = cfg.client
	default:
		base := cfg.host
		if base == nil {
			base = envconfig.Host() // OLLAMA_HOST, as api.ClientFromEnvironment does
		}
		hc := cfg.httpClient
		if hc == nil {
			hc = http.DefaultClient
		}
		e.client = api.NewClient(base, hc)
		e.host = base.String()
	}
	if cfg.dimensions > 0 {
		e.dim.Store(int64(cfg.dimensions))
	}
	return e, nil
}

// Name returns "ollama:MODEL", a spec embed.Open accepts. A ":latest" tag
// is left out, as Ollama itself treats "m" and "m:latest" as one model.
// Options (prefixes, dimensions) are not part of the name: a store should
// be written with the same options throughout.
func (e *Embedder) Name() string { return "ollama:" + strings.TrimSuffix(e.model, ":latest") }

// Model returns the model name.
func (e *Embedder) Model() string { return e.model }

// Dim returns the vector length, or 0 before the first answer.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// Embed embeds documents (texts to be stored and searched), with the
// document prefix. It returns one L2-normalised vector per text, in order,
// which belong to the caller. An empty or white-space-only text is an error
// wrapping [embed.ErrEmptyText], found before any request is sent.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, e.document)
}

// EmbedQuery embeds search queries, with the query prefix; otherwise it is
// like Embed. It implements [embed.QueryEmbedder].
func (e *Embedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, e.query)
}

func (e *Embedder) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimFunc(t, unicode.IsSpace) == "" {
			return nil, fmt.Errorf("ollama: text %d: %w", i, embed.ErrEmptyText)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batchSize {
		batch := texts[start:min(start+e.batchSize, len(texts))]
		input := make([]string, len(batch))
		for i, t := range batch {
			input[i] = prefix + t
		}
		vs, err := e.request1(ctx, input)
		if err != nil {
			if len(texts) > len(batch) {
				return nil, fmt.Errorf("%w (texts %d to %d of %d)", err, start, start+len(batch)-1, len(texts))
			}
			return nil, err
		}
		for i, v := range vs {
			if err := e.check(v, start+i); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// request1 sends one /api/embed request and checks the number of vectors.
func (e *Embedder) request1(ctx context.Context, input []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ollama: embed with %s: %w", e.model, context.Cause(ctx))
	}
	resp, err := e.client.Embed(ctx, &api.EmbedRequest{
		Model:      e.model,
		Input:      input,
		KeepAlive:  e.keepAlive,
		Dimensions: e.request,
	})
	if err != nil {
		return nil, e.explain(ctx, err)
	}
	if len(resp.Embeddings) != len(input) {
		return nil, fmt.Errorf("ollama: model %s answered %d vectors for %d texts", e.model, len(resp.Embeddings), len(input))
	}
	return resp.Embeddings, nil
}

// check validates v (the vector of text i), enforces the dimension and
// normalises v in place.
func (e *Embedder) check(v []float32, i int) error {
	if len(v) == 0 {
		return fmt.Errorf("ollama: model %s answered an empty vector for text %d", e.model, i)
	}
	want := e.dim.Load()
	if want == 0 && e.dim.CompareAndSwap(0, int64(len(v))) {
		want = int64(len(v))
	} else if want == 0 {
		want = e.dim.Load()
	}
	if int64(len(v)) != want {
		return fmt.Errorf("%w: model %s answered %d dimensions for text %d, expected %d", embed.ErrDimension, e.model, len(v), i, want)
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return fmt.Errorf("ollama: model %s answered a non-finite vector for text %d", e.model, i)
	}
	if sum == 0 {
		return fmt.Errorf("ollama: model %s answered an all-zero vector for text %d", e.model, i)
	}
	inv := 1 / math.Sqrt(sum)
	for j, x := range v {
		v[j] = float32(float64(x) * inv)
	}
	return nil
}

// explain turns a client error into one that says what happened and what to
// do, wrapping the matching sentinel.
func (e *Embedder) explain(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("ollama: embed with %s: %w", e.model, context.Cause(ctx))
	}
	if se, ok := errors.AsType[api.StatusError](err); ok {
		if se.StatusCode == http.StatusNotFound || strings.Contains(se.ErrorMessage, "not found") {
			return fmt.Errorf("%w: ollama server %s does not have model %q; run `ollama pull %s` (server said: %w)",
				embed.ErrModelNotFound, e.where(nil), e.model, e.model, se)
		}
		return fmt.Errorf("ollama: embed with %s on %s: server answered %d: %w", e.model, e.where(nil), se.StatusCode, se)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("%w: ollama server at %s (is `ollama serve` running? OLLAMA_HOST sets the address): %w",
			embed.ErrUnreachable, e.where(ue), err)
	}
	return fmt.Errorf("ollama: embed with %s on %s: %w", e.model, e.where(nil), err)
}

// where names the server: the configured address, else the scheme and host
// of the failed request, else "(address unknown)".
func (e *Embedder) where(ue *url.Error) string {
	if e.host != "" {
		return e.host
	}
	if ue != nil {
		if u, err := url.Parse(ue.URL); err == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
	}
	return "(address unknown)"
}

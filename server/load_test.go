package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/agentmem/agentmem/memory/longterm"
)

// loadClient is an HTTP client sized for n concurrent connections.
func loadClient(n int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = n, n
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// post sends v as JSON and decodes the answer into out (if not nil),
// failing unless the status is want.
func post(c *http.Client, method, url string, v any, want int, out any) error {
	var body io.Reader
	if v != nil {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// TestLoad: 64 concurrent clients × 100 mixed operations (60% search,
// 25% add, 10% get, 5% delete) over loopback; no errors, and the store's
// counts agree with what the clients acknowledged. Each client writes its
// own namespace; the store syncs lazily (WithoutSync) to keep the test
// bounded on a shared 2-core machine — durability is tested elsewhere.
// With -short each client runs 50 operations; the full load, 1,000 each
// (about 70 s on 2 cores, minutes under the race detector), runs with
// AGENTMEM_LOAD_FULL=1:
//
//	AGENTMEM_LOAD_FULL=1 go test -run '^TestLoad$' -v ./server
func TestLoad(t *testing.T) {
	clients, ops := 64, 100
	switch {
	case os.Getenv("AGENTMEM_LOAD_FULL") != "":
		ops = 1000
	case testing.Short():
		ops = 50
	}
	ts := start(t, newMemory(t, longterm.WithoutSync()))
	hc := loadClient(clients)
	var searches, hits atomic.Int64
	kept := make([]int, clients) // adds minus deletes, by client
	g, _ := errgroup.WithContext(context.Background())
	for c := range clients {
		g.Go(func() error {
			ns := fmt.Sprintf("client:%d", c)
			var ids []string
			mySearches := 0
			for i := range ops {
				switch op := i % 20; {
				case op < 5 || len(ids) == 0: // add
					var res AddResult
					err := post(hc, "POST", ts.url+"/v1/memories", AddRequest{
						Text: fmt.Sprintf("client %d note %d about order ORD-%d-%d and the weather", c, i, c, i), Scope: Scope{Namespace: ns}}, http.StatusCreated, &res)
					if err != nil {
						return err
					}
					ids = append(ids, res.ID)
				case op < 17: // search
					var res SearchResult
					if err := post(hc, "POST", ts.url+"/v1/search", SearchRequest{Query: fmt.Sprintf("order ORD-%d-%d", c, i-1), Scope: Scope{Namespace: ns}, K: 3}, http.StatusOK, &res); err != nil {
						return err
					}
					searches.Add(1)
					mySearches++
					hits.Add(int64(len(res.Hits)))
					for _, h := range res.Hits {
						if h.Namespace != ns {
							return fmt.Errorf("client %d got a hit of namespace %s", c, h.Namespace)
						}
					}
				case op < 19: // get
					var m Memory
					if err := post(hc, "GET", ts.url+"/v1/memories/"+ids[len(ids)-1], nil, http.StatusOK, &m); err != nil {
						return err
					}
				default: // delete the oldest
					if err := post(hc, "DELETE", ts.url+"/v1/memories/"+ids[0], nil, http.StatusNoContent, nil); err != nil {
						return err
					}
					ids = ids[1:]
				}
			}
			kept[c] = len(ids)
			if mySearches < ops/2 {
				return fmt.Errorf("client %d: %d searches of %d operations", c, mySearches, ops)
			}
			var lr ListResult
			if err := post(hc, "GET", ts.url+"/v1/memories?namespace="+ns+"&limit=1000", nil, http.StatusOK, &lr); err != nil {
				return err
			}
			if lr.Total != len(ids) {
				return fmt.Errorf("client %d: list total %d, kept %d", c, lr.Total, len(ids))
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	total := 0
	for _, k := range kept {
		total += k
	}
	assert.Equal(t, total, ts.mem.Len())
	assert.Positive(t, hits.Load())
	t.Logf("%d clients × %d ops: %d memories kept, %d searches found %d hits", clients, ops, total, searches.Load(), hits.Load())
}

// TestGracefulShutdown: requests in flight when the server is told to stop
// are answered, and every acknowledged write is in the store reopened
// after Close.
func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	emb := mustHash(t)
	mem, err := longterm.Open(t.Context(), dir, emb, longterm.WithLogger(quiet))
	require.NoError(t, err)
	ts := start(t, mem)
	hc := loadClient(16)
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	stopping := make(chan struct{})
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				var res AddResult
				err := post(hc, "POST", ts.url+"/v1/memories", AddRequest{Text: fmt.Sprintf("writer %d line %d", c, i)}, http.StatusCreated, &res)
				if err != nil {
					select {
					case <-stopping: // refused after shutdown began: fine, not acknowledged
						return
					default:
						t.Errorf("before shutdown: %v", err)
						return
					}
				}
				mu.Lock()
				acked = append(acked, res.ID)
				mu.Unlock()
			}
		}()
	}
	// Shut down once writes flow (64 acknowledged), the writers' next
	// requests in flight, instead of after a guessed 300 ms.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 64
	}, time.Minute, 5*time.Millisecond, "no writes acknowledged")
	close(stopping)
	require.NoError(t, ts.stop())
	wg.Wait()
	require.NoError(t, mem.Close())

	mem, err = longterm.Open(t.Context(), dir, emb, longterm.WithLogger(quiet))
	require.NoError(t, err)
	defer mem.Close()
	require.NotEmpty(t, acked)
	for _, id := range acked {
		_, ok := mem.Get(id)
		require.True(t, ok, "acknowledged %s is lost", id)
	}
	t.Logf("%d acknowledged writes, all in the reopened store (%d records)", len(acked), mem.Len())
}

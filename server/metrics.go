package server

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, in a registry of its own
// (so that two servers in one process do not collide).
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec   // route, code
	latency   *prometheus.HistogramVec // route
	toolCalls *prometheus.CounterVec   // tool, outcome
	toolTime  *prometheus.HistogramVec // tool
}

func newMetrics(st Store) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_http_requests_total",
			Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14), // 100µs … ~15s
		}, []string{"route"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentmem_mcp_tool_calls_total",
			Help: "MCP tool calls by tool and outcome (ok, or the error code).",
		}, []string{"tool", "outcome"}),
		toolTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentmem_mcp_tool_duration_seconds",
			Help:    "MCP tool call latency by tool.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
		}, []string{"tool"}),
	}
	memories, chunks := func() float64 { return float64(st.Len()) }, func() float64 { return 0 }
	c, hasChunks := st.(chunker)
	if hasChunks {
		chunks = func() float64 { return float64(c.Chunks()) }
	}
	if cn, ok := st.(counter); ok {
		// NaN, not 0, while the store's database cannot be reached.
		memories, chunks = countGauge(cn, false), countGauge(cn, true)
	}
	m.reg.MustRegister(m.requests, m.latency, m.toolCalls, m.toolTime,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentmem_store_memories",
			Help: "Memories (records) in the store.",
		}, memories),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if hasChunks {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentmem_store_chunks",
			Help: "Indexed children (chunks) in the store.",
		}, chunks))
	}
	return m
}

// countGauge returns a gauge function of c's records (or chunks): NaN when
// they cannot be counted.
func countGauge(c counter, chunks bool) func() float64 {
	return func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		defer cancel()
		records, n, err := c.Counts(ctx)
		switch {
		case err != nil:
			return math.NaN()
		case chunks:
			return float64(n)
		}
		return float64(records)
	}
}

// tool records one MCP tool call.
func (m *metrics) tool(name, outcome string, d time.Duration) {
	m.toolCalls.WithLabelValues(name, outcome).Inc()
	m.toolTime.WithLabelValues(name).Observe(d.Seconds())
}

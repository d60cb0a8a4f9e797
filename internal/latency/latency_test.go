package latency

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPercentileMs(t *testing.T) {
	assert.Zero(t, PercentileMs(nil, 0.5))
	d := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	assert.Equal(t, 1.0, PercentileMs(d, 0))
	assert.Equal(t, 3.0, PercentileMs(d, 0.5))
	assert.Equal(t, 4.0, PercentileMs(d, 0.99))
	assert.Equal(t, 4.0, PercentileMs(d, 1))
	assert.Equal(t, 4*time.Millisecond, d[0], "d is not modified")
}

package stats

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountersAndExposition(t *testing.T) {
	var hits Counter
	misses := NewCounterVec("reason", "absent", "expired")
	var maxUs Gauge
	var r Registry
	r.CounterVec("open_channels_cache_misses_total", "open-set misses", misses)
	r.Counter("open_channels_cache_hits_total", "open-set hits", &hits)
	r.Gauge("pass_max_us", "", &maxUs)

	hits.Add(3)
	misses.With("expired").Inc()
	maxUs.SetMax(7)
	maxUs.SetMax(5)

	assert.Equal(t, map[string]int64{
		"open_channels_cache_hits_total":                     3,
		`open_channels_cache_misses_total{reason="absent"}`:  0,
		`open_channels_cache_misses_total{reason="expired"}`: 1,
		"pass_max_us": 7,
	}, r.Snapshot())

	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	want := `# HELP open_channels_cache_hits_total open-set hits
# TYPE open_channels_cache_hits_total counter
open_channels_cache_hits_total 3
# HELP open_channels_cache_misses_total open-set misses
# TYPE open_channels_cache_misses_total counter
open_channels_cache_misses_total{reason="absent"} 0
open_channels_cache_misses_total{reason="expired"} 1
# TYPE pass_max_us gauge
pass_max_us 7
`
	assert.Equal(t, want, b.String())
}

func TestMisuseIsLoud(t *testing.T) {
	v := NewCounterVec("reason", "oversize", "wait_timeout")
	assert.PanicsWithValue(t, `stats: reason="load_limit" is not a declared label value (have [oversize wait_timeout])`,
		func() { v.With("load_limit") })
	assert.Panics(t, func() { NewCounterVec("reason", "a", "a") })
	assert.Panics(t, func() { var c Counter; c.Add(-1) })
	var r Registry
	r.Counter("x_total", "", &Counter{})
	assert.Panics(t, func() { r.Counter("x_total", "", &Counter{}) })
	assert.Panics(t, func() { r.Counter("bad name", "", &Counter{}) })
}

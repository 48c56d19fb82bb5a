package findings

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsRoundTripThroughTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claims.jsonl")
	t.Setenv("WINDTUNNEL_CLAIMS", path)
	tt := 0.97
	Report(t, Record{ID: "OC-2", Verdict: Holds, Measured: "0.97s", Bound: "< 1s", Value: 0.97, Unit: "s", Seeds: 10,
		Tightness: &tt, Hist: NewHist([]float64{0.1, 0.97}, 1, 0.97)})
	Report(t, Record{ID: "OC-6", Verdict: KnownDeviation, Measured: "found", Bound: "-", Witness: "read r7 stale\nmore"})
	got, err := Read(path)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "OC-2", got[0].ID)
	assert.Equal(t, t.Name(), got[0].Test)
	assert.InDelta(t, 0.97, *got[0].Tightness, 1e-12)
	assert.Equal(t, int64(2), got[0].Hist.Total())
	assert.Equal(t, KnownDeviation, got[1].Verdict)
}

func TestClaimsFilesAreReadStrictly(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{ //windtunnel:unordered independent cases
		"unknown field": {`{"id":"OC-2","verdict":"holds","bogus":1}`, "unknown field"},
		"trailing":      {`{"id":"OC-2","verdict":"holds"} {}`, "trailing data"},
		"no id":         {`{"verdict":"holds"}`, "needs an ID"},
		"bad verdict":   {`{"id":"OC-2","verdict":"fine"}`, "known verdict"},
		"not json":      {`{`, "claims.jsonl:1"},
	} {
		_, err := ReadFrom(strings.NewReader(c.text), "claims.jsonl")
		assert.ErrorContains(t, err, c.want, name)
	}
}

type recordingTB struct {
	testing.TB
	errors int
}

func (r *recordingTB) Errorf(string, ...any) { r.errors++ }
func (r *recordingTB) Helper()               {}
func (r *recordingTB) Name() string          { return "fake" }
func (r *recordingTB) Logf(string, ...any)   {}

func TestMalformedRecordsAreRejected(t *testing.T) {
	rt := &recordingTB{TB: t}
	Report(rt, Record{ID: "OC-2", Verdict: "fine"})
	Report(rt, Record{Verdict: Holds})
	assert.Equal(t, 2, rt.errors)
}

func TestHistogramsBinOnALinearAxisToTheBound(t *testing.T) {
	h := NewHist([]float64{0, 0.5, 0.999, 1.0, 1.19, 1.2, 5}, 1, 0.999)
	assert.Equal(t, 1.2, h.Upper)
	assert.Equal(t, int64(2), h.Over, "1.2 and 5 are past the axis")
	assert.Equal(t, int64(7), h.Total())
	// 0.999 and 1.0 fall in different bars: the chart separates them.
	bar := func(v float64) int { return int(v / h.Upper * HistBins) }
	assert.NotEqual(t, bar(0.83), bar(0.999))
	assert.Equal(t, int64(1), h.Bins[bar(0.999)])
	o := NewHist([]float64{0.5}, 1, 0.5)
	h.Merge(o)
	assert.Equal(t, int64(8), h.Total())
	h.Merge(NewHist([]float64{0.5}, 2, 0.5)) // another axis: ignored
	assert.Equal(t, int64(8), h.Total())
	assert.Equal(t, fmt.Sprint(0.999), fmt.Sprint(h.Worst))
}

package claims

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func TestClaimsParse(t *testing.T) {
	cs, err := Claims()
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, c := range cs {
		ids[c.ID] = true
		assert.NotEmpty(t, c.Text, c.ID)
		assert.Equal(t, c.ID[:2], c.Family)
	}
	for _, id := range []string{"OC-1", "OC-10", "MS-11", "DR-9", "TW-9"} {
		assert.True(t, ids[id], id)
	}
	_, err = parseClaims("| OC-1 | only | three |\n")
	assert.Error(t, err)
	_, err = parseClaims("no rows")
	assert.Error(t, err)
	_, err = parseClaims("| OC-1 | a | b | c |\n| OC-1 | a | b | c |\n")
	assert.ErrorContains(t, err, "twice")
}

// The embedded CLAIMS.md is the shared one: the audit judges the claims the
// project was given, not an older copy.
func TestEmbeddedClaimsMatchTheShared(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "CLAIMS.md"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("../shared/CLAIMS.md is not next to this checkout (a clean clone elsewhere): nothing to compare")
	}
	require.NoError(t, err)
	assert.Equal(t, string(shared), Markdown(), "scenarios/claims/CLAIMS.md differs from ../shared/CLAIMS.md: copy the shared one")
}

func TestEveryBoundIsForAKnownClaimAndUnique(t *testing.T) {
	cs, err := Claims()
	require.NoError(t, err)
	known := map[string]bool{}
	for _, c := range cs {
		known[c.ID] = true
	}
	seen := map[string]bool{}
	for _, b := range Table {
		key := b.Claim + "/" + b.Name
		assert.True(t, known[b.Claim], "bound %s names an unknown claim", key)
		assert.False(t, seen[key], "bound %s twice", key)
		seen[key] = true
		assert.NotEmpty(t, b.Source, key)
		assert.NotZero(t, b.Kind, key)
		assert.False(t, b.Strict && b.Kind != AtMost, "%s: only an upper bound can be strict", key)
	}
	for _, m := range Metrics {
		assert.True(t, known[m.Claim], "metric %s names an unknown claim", m.Series())
	}
	assert.Panics(t, func() { Get("OC-2", "no such bound") })
}

func TestBoundsJudgeFigures(t *testing.T) {
	age := Get("OC-2", "open set max age")
	assert.Equal(t, time.Second, age.Duration())
	assert.True(t, age.Holds(0.999999999))
	assert.False(t, age.Holds(1), "a strict window: an answer at exactly the bound is outside it")
	assert.Equal(t, "< 1s", age.String())
	assert.InDelta(t, 0.995, age.Tightness(0.995), 1e-12)
	fetch := Get("MS-4", "fetch ids")
	assert.True(t, fetch.Holds(16385))
	assert.False(t, fetch.Holds(16386))
	assert.Equal(t, 1.0, fetch.Tightness(16385))
	assert.Equal(t, "= 16385", fetch.String())
	assert.Equal(t, "64 MiB", Get("MS-8", "budget").Format(64<<20))
	assert.Equal(t, "≥ 20x", Get("OC-8", "row reduction").String())
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

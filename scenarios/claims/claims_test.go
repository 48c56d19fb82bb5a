package claims

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsRoundTripThroughTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claims.jsonl")
	old := *flagFile
	*flagFile = path
	defer func() { *flagFile = old }()

	Report(t, Record{ID: "OC-2", Verdict: Holds, Measured: "0.97s", Bound: "≤ 1s", Value: 0.97, Unit: "s", Seeds: 10,
		Buckets: []Bucket{{"<1s", 9}, {"≥1s", 0}}})
	Report(t, Record{ID: "OC-6", Verdict: KnownDeviation, Measured: "found", Bound: "-", Witness: "read r7 stale\nmore"})
	got, err := Read(path)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "OC-2", got[0].ID)
	assert.Equal(t, t.Name(), got[0].Test)
	assert.Equal(t, []Bucket{{"<1s", 9}, {"≥1s", 0}}, got[0].Buckets)
	assert.Equal(t, KnownDeviation, got[1].Verdict)
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

func TestMaxKeepsTheWorstAndItsWitness(t *testing.T) {
	var m Max
	assert.False(t, m.Seen())
	m.Observe(0.5, func() string { return "a" })
	m.Observe(0.9, func() string { return "b" })
	m.Observe(0.9, func() string { return "c" })
	m.Observe(0.1, func() string { return "d" })
	assert.Equal(t, 0.9, m.Value)
	assert.Equal(t, "b", m.Witness)
	assert.Equal(t, Violated, Verdict(false))
	assert.Equal(t, Holds, Verdict(true))
}

func TestPerSeedCountsEachSeedOnce(t *testing.T) {
	var p PerSeed[int]
	p.Set(7, 1)
	p.Set(3, 2)
	p.Set(7, 1) // the same seed again: a re-run
	assert.Equal(t, 2, p.Len())
	assert.Equal(t, []int{1, 2}, p.Values())
	assert.Equal(t, []uint64{7, 3}, p.Seeds())
}

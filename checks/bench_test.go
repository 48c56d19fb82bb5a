package checks

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// benchHistory builds a deterministic history: keys × commitsPerKey commits
// spread over 100 s, and n reads, each answering the truth at a random
// instant in [invoke − lag, return] (lag 0: every read is fresh, so the
// history is linearizable).
func benchHistory(keys, commitsPerKey, n int, lag time.Duration) (Truth, []Read) {
	rng := rand.New(rand.NewPCG(1, 2))
	const span = int64(100 * time.Second)
	tr := make(Truth, keys)
	names := make([]string, keys)
	for k := range names {
		names[k] = fmt.Sprintf("user-%04d/channel-%04d", k, k%97)
		_ = tr.Declare(names[k], rng.IntN(2) == 0)
		at := make([]int64, commitsPerKey)
		for i := range at {
			at[i] = rng.Int64N(span)
		}
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		for _, t := range at {
			_ = tr.Commit(names[k], t, rng.IntN(2) == 0)
		}
	}
	reads := make([]Read, n)
	for i := range reads {
		k := names[rng.IntN(keys)]
		inv := rng.Int64N(span)
		ret := inv + rng.Int64N(int64(10*time.Millisecond))
		seen := inv - int64(lag) + rng.Int64N(ret-inv+int64(lag)+1)
		v, _ := tr.Value(k, seen)
		reads[i] = Read{ID: i, Key: k, Invoke: inv, Return: ret, Granted: v}
	}
	return tr, reads
}

// linearScanMax is the baseline: the definition evaluated per read by
// walking the key's whole commit list (O(m) per read instead of O(log m)).
func linearScanMax(reads []Read, truth Truth) (maxS int64, phantoms int) {
	for _, r := range reads {
		kt := truth[r.Key]
		v, lastEnd, everA := kt.Initial, int64(0), kt.Initial == r.Granted
		endSeen := false
		for _, c := range kt.Commits {
			if c.At > r.Return {
				break
			}
			if v == r.Granted && c.Value != r.Granted {
				lastEnd, endSeen = c.At, true
			}
			v = c.Value
			everA = everA || v == r.Granted
		}
		switch {
		case v == r.Granted:
			// fresh
		case !everA || !endSeen:
			phantoms++
		default:
			maxS = max(maxS, r.Invoke-lastEnd)
		}
	}
	return maxS, phantoms
}

// BenchmarkStaleness1M: 1,000,000 reads over 1,000 keys with 50 commits
// each. Goal: exact ≤ 1 s per op. linear-scan is the O(n·m) baseline.
func BenchmarkStaleness1M(b *testing.B) {
	tr, reads := benchHistory(1000, 50, 1_000_000, 50*time.Millisecond)
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			if _, err := Staleness(reads, tr); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(reads)), "ns/read")
	})
	b.Run("baseline=linear-scan", func(b *testing.B) {
		for b.Loop() {
			linearScanMax(reads, tr)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(reads)), "ns/read")
	})
}

// BenchmarkLinearizable: porcupine on 100,000 ops over 1,000 keys (20,000
// commit writes and 80,000 fresh reads), against the exact staleness checker
// on the same reads as the baseline.
func BenchmarkLinearizable(b *testing.B) {
	tr, reads := benchHistory(1000, 20, 80_000, 0)
	ops, init := shiftedHistory(reads, tr, 0)
	b.Run("porcupine", func(b *testing.B) {
		for b.Loop() {
			if res := Linearizable(ops, init, 0); res.Verdict != porcupine.Ok {
				b.Fatalf("verdict %s", res.Verdict)
			}
		}
		b.ReportMetric(float64(len(ops)), "ops")
	})
	b.Run("baseline=exact-staleness", func(b *testing.B) {
		for b.Loop() {
			if _, err := Staleness(reads, tr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBenchHistoriesAreWhatTheBenchmarksClaim keeps the benchmark inputs
// honest with exact, machine-independent counts: the baseline agrees with the
// exact checker, the staleness history has stale reads, and the linearizable
// one has none.
func TestBenchHistoriesAreWhatTheBenchmarksClaim(t *testing.T) {
	tr, reads := benchHistory(100, 50, 20_000, 50*time.Millisecond)
	rep, err := Staleness(reads, tr)
	if err != nil {
		t.Fatal(err)
	}
	maxS, phantoms := linearScanMax(reads, tr)
	exactMax := max(rep.Grant.MaxStaleness, rep.Deny.MaxStaleness)
	if int64(exactMax) != maxS || phantoms != rep.Grant.Phantoms+rep.Deny.Phantoms {
		t.Fatalf("baseline (max %d, %d phantoms) disagrees with exact:\n%s", maxS, phantoms, rep)
	}
	if exactMax <= 0 || exactMax > 50*time.Millisecond || phantoms != 0 {
		t.Fatalf("lagged history should be stale by at most 50ms, without phantoms:\n%s", rep)
	}
	tr, reads = benchHistory(100, 20, 2_000, 0)
	if agree, detail := CrossCheck(reads, tr, 0); !agree || !stalenessHolds(t, reads, tr, 0) {
		t.Fatalf("fresh history must hold at Δ=0: %s", detail)
	}
}

func stalenessHolds(t *testing.T, reads []Read, tr Truth, d time.Duration) bool {
	t.Helper()
	rep, err := Staleness(reads, tr)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Holds(d)
}

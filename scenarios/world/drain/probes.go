package drain

import (
	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/sim"
)

// The interleaving classes of the drain claims (issue 17), as sim probes: a
// check declares which of them its seeds must reach (claims.Probe), and
// Probe counts them from a checked history.
const (
	// ProbeRecordInSplit: a record issued after a drain's first swap that
	// took the write lock before its second (DR-3).
	ProbeRecordInSplit = "dr/record-issued-during-split"
	// ProbeRecordAfterSplit: a record issued at a drain's last yield, after
	// its split and before its put-back (DR-3: the whole split).
	ProbeRecordAfterSplit = "dr/record-issued-after-split"
	// ProbeDrainWaiting: a second drain waiting on the drain mutex during
	// the first's split (DR-4).
	ProbeDrainWaiting = "dr/second-drain-waiting-during-split"
	// ProbePruneInSplit: a prune that took the write lock between a drain's
	// two swaps (DR-4, DR-10: two drains around a prune).
	ProbePruneInSplit = "dr/prune-during-split"
	// ProbeDrainDuringPrune: a drain called while a prune held the write
	// lock (DR-10).
	ProbeDrainDuringPrune = "dr/drain-began-while-prune-held-lock"
	// ProbePutBackAfterKept: a key put back with kept points and points
	// recorded during the split, which must follow them (DR-5).
	ProbePutBackAfterKept = "dr/split-records-put-back-after-kept"
	// ProbePutBackNewKey: a key that had no kept points, put back with only
	// points recorded during the split (DR-5).
	ProbePutBackNewKey = "dr/split-records-on-a-new-key"
	// ProbeQueryDeviation: a query inside a split that missed buffered
	// points, the documented deviation (DR-7).
	ProbeQueryDeviation = "dr/query-in-split-missed-points"
)

// CountProbes counts the interleaving classes a checked history contains as sim
// probes of the run.
func CountProbes(s *sim.Sim, r *checks.CollectorReport) {
	in := r.Interleavings
	for _, p := range []struct {
		name string
		n    int64
	}{
		{ProbeRecordInSplit, in.RecordsInSplit},
		{ProbeRecordAfterSplit, in.RecordsAfterSplit},
		{ProbeDrainWaiting, in.DrainWaitingInSplit},
		{ProbePruneInSplit, in.PrunesInSplit},
		{ProbeDrainDuringPrune, in.DrainsDuringPrune},
		{ProbePutBackAfterKept, in.PutBackAfterKept},
		{ProbePutBackNewKey, in.PutBackNewKey},
		{ProbeQueryDeviation, in.QueryDeviations},
	} {
		for range p.n {
			s.Probe(p.name)
		}
	}
}

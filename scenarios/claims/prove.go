package claims

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// proofPreemptions is the preemption bound of the proofs: most
// concurrency bugs need one or two preemptions (the CHESS result).
const proofPreemptions = 2

// ProofCheck declares a bounded-exhaustive check of a claim: every
// schedule of a small configuration within a preemption bound, instead of
// sampled seeds.
type ProofCheck struct {
	Claim string
	// Config describes the configuration in words, for the audit.
	Config string
	// MaxPreemptions is the bound (0: two, as most concurrency bugs need
	// at most).
	MaxPreemptions int
	// Reduction: DPOR relies on the program being data-race-free with
	// respect to sim objects (sim/explore.go).
	Reduction sim.Reduction
	// MaxSchedules bounds the exploration (0: simtest's default).
	MaxSchedules int64
	// Body is one run; it fails the run (s.Failf) when the claim breaks.
	Body func(s *sim.Sim)
	// Probes are rare events the schedules must reach, each at least Min
	// times over the whole exploration: a proof whose configuration never
	// produces the interleaving it is about proves nothing.
	Probes []Probe
}

// Prove runs the exploration through the harness (simtest.Prove: failing
// schedules are written as replay files), and reports the proof's record.
func Prove(t *testing.T, p ProofCheck) simtest.ProofResult {
	t.Helper()
	bound := p.MaxPreemptions
	if bound == 0 {
		bound = proofPreemptions
	}
	counts := map[string]*findings.ProbeCount{}
	for _, pr := range p.Probes {
		counts[pr.Name] = &findings.ProbeCount{Name: pr.Name, Claim: p.Claim, What: pr.What, Min: pr.Min}
	}
	res := simtest.Prove(t, simtest.ProofOptions{MaxPreemptions: bound, Reduction: p.Reduction, MaxSchedules: p.MaxSchedules,
		Visit: func(r sim.Result) {
			for name, n := range r.Probes { //windtunnel:unordered summing counts
				if c := counts[name]; c != nil && n > 0 {
					c.Seeds++
					c.Count += n
				}
			}
		}}, p.Body)
	verdict := findings.Holds
	measured := fmt.Sprintf("every one of %d schedules with ≤ %d preemptions satisfies the claim (%d branches pruned by %s)", res.Explored, bound, res.Pruned, p.Reduction)
	var witness string
	switch {
	case res.Err != nil:
		verdict, measured = findings.Violated, "the exploration failed: "+res.Err.Error()
	case res.Failures > 0:
		verdict = findings.Violated
		measured = fmt.Sprintf("%d of %d schedules violate the claim", res.Failures, res.Explored)
		witness = res.Failure.Error()
		if res.ReplayFile != "" {
			witness += "\nreplay: -sim.replay=" + res.ReplayFile
		}
	case !res.Exhausted:
		verdict = findings.Violated
		measured = fmt.Sprintf("the space was not exhausted (%d schedules explored)", res.Explored)
	}
	var probes []findings.ProbeCount
	for _, pr := range p.Probes {
		c := counts[pr.Name]
		probes = append(probes, *c)
		if c.Count < c.Min && verdict == findings.Holds {
			verdict = findings.Violated
			measured = fmt.Sprintf("probe %s (%s) reached in %d of %d schedules, fewer than %d: the configuration does not contain the race", c.Name, c.What, c.Seeds, res.Explored, c.Min)
			t.Errorf("%s proof: %s", p.Claim, measured)
		}
	}
	findings.Report(t, findings.Record{
		ID: p.Claim, Verdict: verdict, Measured: measured, Bound: "every schedule", Seeds: 1, Witness: witness, Probes: probes,
		Proof: &findings.Proof{Config: p.Config, MaxPreemptions: bound, Reduction: p.Reduction.String(),
			Explored: res.Explored, Pruned: res.Pruned, Exhausted: res.Exhausted},
	})
	return res
}

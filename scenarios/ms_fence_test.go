package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// msLinTimeout bounds porcupine on one seed's history. Histories here are
// partitioned per key and a few hundred operations each, checked in well
// under a second; hitting the limit is reported as a failure, never a pass.
const msLinTimeout = 20 * time.Second

// TestMS3_FenceLinearizable checks MS-3: an old load can finish its own
// request but cannot repopulate an invalidated entry. On ONE pod with
// reliable invalidation (every write invalidates locally before it
// returns), the membership checks and the writes of their keys must be
// linearizable as boolean registers (porcupine).
//
// About half of the loads take 300–900 ms and admins write about twice a
// second, so loads straddle invalidations of their own user; clients
// re-check every channel of their user every ≤300 ms, so a snapshot that an
// unfenced load published after the invalidation is read at once. On an
// Illegal verdict the porcupine visualization is written and named in the
// error and the claim record.
func TestMS3_FenceLinearizable(t *testing.T) {
	type seedFigures struct {
		ops      int
		artifact string
		witness  string
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 8}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		w, err := flyMS(s, msOpts{pods: 1, reliable: true, lossyPod: -1})
		if err != nil {
			return err
		}
		lin := w.History.LinOps(relay.Membership)
		fig.ops = len(lin)
		res := checks.Linearizable(lin, w.Tracker.Initial(), msLinTimeout)
		switch {
		case res.Err != nil:
			return fmt.Errorf("MS-3: the history was rejected: %v", res.Err)
		case res.Verdict == porcupine.Ok:
			return nil
		case res.Verdict == porcupine.Unknown:
			return fmt.Errorf("MS-3: porcupine gave no verdict within %v on %d operations", msLinTimeout, len(lin))
		}
		path, verr := res.WriteVisualization(msSeedDir(t, s))
		if verr != nil {
			path = "(no visualization: " + verr.Error() + ")"
		} else {
			fig.artifact = path
		}
		fig.witness = fmt.Sprintf("seed %#x: not linearizable on keys %s; visualization %s", s.Seed(), strings.Join(res.Keys, ", "), path)
		return fmt.Errorf("MS-3: the membership checks on one pod with reliable invalidation are not linearizable on keys %s (%s); visualization: %s",
			strings.Join(res.Keys, ", "), res.String(), path)
	})
	var ops, worstOps int
	var artifact, witness string
	results.Each(func(_ uint64, f *seedFigures) {
		ops, worstOps = ops+f.ops, max(worstOps, f.ops)
		if witness == "" && f.witness != "" {
			artifact, witness = f.artifact, f.witness
		}
	})
	claims.Report(t, claims.Record{
		ID: "MS-3", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("%d of %d seeds linearizable (%d operations, up to %d per seed)", sum.Seeds-sum.Failures, sum.Seeds, ops, worstOps),
		Bound:    "every seed linearizable", Value: float64(sum.Failures), Unit: "seeds not linearizable", Seeds: sum.Seeds,
		Witness: witness, Artifact: artifact,
		Note: "one pod, reliable bus, half the loads 300–900 ms, swarm DB plan; porcupine over boolean registers per (user, channel)",
	})
}

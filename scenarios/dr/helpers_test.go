package dr

import (
	"fmt"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
)

// keys are the metric keys of the DR worlds: more than one, since the
// drain yields once per key and once after the split.
var keys = []string{"GetItem.latency", "GetItem.size", "PutItem.latency"}

// linKeys are the keys of the worlds porcupine checks: each recorder owns
// two, and "Query.latency" is left to the drain's yields, so that porcupine
// guesses few record orders (drain.Plan.RecorderKeys).
var (
	linKeys      = []string{"GetItem.latency", "GetItem.size", "PutItem.latency", "PutItem.size", "Scan.latency", "Scan.size", "Query.latency"}
	linOwners    = [][]string{linKeys[0:2], linKeys[2:4], linKeys[4:6]}
	linHookKey   = linKeys[6]
	linRecorders = len(linOwners)
)

// limits are the source text's numbers the collector checkers judge by.
func limits() checks.CollectorLimits {
	return checks.CollectorLimits{ChunkPoints: int(claims.Get("DR-6", "chunk points").Int())}
}

// fly builds a world on s, runs the plan, judges the history and counts
// its interleaving classes as probes. The error is the first violation of
// the given claims (or of any other, when none of them is violated).
func fly(s *sim.Sim, cfg drain.Config, p drain.Plan, claimIDs ...string) (*drain.World, *checks.CollectorReport, error) {
	w, err := drain.New(s, cfg)
	if err != nil {
		return nil, nil, err
	}
	w.Run(p)
	r := drain.Check(w, limits())
	drain.CountProbes(s, r)
	return w, r, r.Err(claimIDs...)
}

// probe declares one of the world's interleaving probes for a check.
func probe(name, what string, min int64) claims.Probe {
	return claims.Probe{Name: name, What: what, Min: min}
}

// sizes are the buffered amounts the source text's tests use: 4,000 and
// 400,000 points per key, with the seeds each gets by default.
var sizes = []struct {
	perKey, seeds int
}{{4_000, 8}, {400_000, 1}}

// heavyCap is the seed cap of a configuration: the 400,000-per-key ones
// take seconds of CPU per seed, and three seeds already show what they are
// for (every straddling chunk, hundreds of thousands of buffered points).
func heavyCap(perKey int) int {
	if perKey >= 100_000 {
		return 3
	}
	return 0
}

func sizeName(perKey int) string { return fmt.Sprintf("perKey=%d", perKey) }

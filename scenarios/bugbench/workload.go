// Package bugbench holds the bug benchmark's workloads: programs that drive
// the production code through the runtime seam and check a claim, so that
// windtunnel's strategies (in a simulation) and a Go user's stress runs and
// testing/synctest (on real goroutines, rt.Real) run the same code under
// the same checker. scenarios/cmd/bugbench runs them (make bugbench);
// docs/bugbench.md shows the table.
package bugbench

import (
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Workload is a program every approach runs: it drives the production code
// through r, checks the outcome and returns nil or an error naming the
// violated claim. It must run on real goroutines (rt.Real) as well as in a
// simulation: it starts goroutines with r.Go and waits with r's own
// primitives, never with channels or sync.
type Workload struct {
	Name  string
	Claim string // the claim its checker serves
	Run   func(r rt.Runtime) error
	// Selected names the events SURW samples uniformly (sim.Config.Selected):
	// the operations the claim hangs on.
	Selected func(object string) bool
	// Waits is the time one run waits by the clock (its time windows): real
	// seconds on real goroutines outside a bubble, virtual elsewhere.
	Waits time.Duration
}

// Target is a mutant the benchmark measures, with the workload whose
// checker catches it, or the reason it has none on real goroutines.
type Target struct {
	Mutant   string
	Workload *Workload // nil: not benchmarked, for Reason
	Reason   string
}

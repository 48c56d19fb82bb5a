package audit

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A schema-built mutant's counterexample is checked while it shrinks: the
// shrinker switches the mutant off (sim/faultswitch) and keeps a smaller
// run only if the code without it passes. A mutant with a build of its own
// (a constant used all over its package) cannot be switched off there. So
// its shrunk run is checked once afterwards, in another process. The
// family's test binary without the mutant replays the shrunk file, its
// schedule followed where it fits (-sim.replay.guided), and its seed's
// subtest must pass. (The test around it may fail on a verdict over all
// its seeds, such as a probe's minimum, which one replayed seed does not
// reach.) That checks the result, not the way to it.

// Values of MutantResult.AfterControl.
const (
	afterPasses = "passes"
	afterFails  = "fails: "
)

// controlAfter replays sum's shrunk run on the code without m: the family's
// schema binary run with no mutant selected (the code as it is), or, when
// the family has none, go test of its package. It returns afterPasses, or
// afterFails and what the run said.
func (r Runner) controlAfter(ctx context.Context, m mutants.Mutant, sum *simtest.ShrinkSummary, binary string) string {
	sim := []string{"-sim.replay=" + sum.Replay, "-sim.replay.guided", "-sim.record=false", "-sim.artifacts=false"}
	run := &testRun{watch: sum.Test} // the seed's subtest says; its test may fail on a verdict over seeds a replay does not run
	if binary != "" {
		ctx, cancel := context.WithTimeout(ctx, r.Timeout)
		defer cancel()
		args := append(append([]string{"-test.run", testPattern(sum.Test)}, sim...), "-test.count=1")
		_ = r.runBinary(ctx, run, m.Pkg, withoutMutant(os.Environ()), binary, args...)
	} else {
		_ = r.goTest(ctx, run, nil, append([]string{m.Pkg, "-run", testPattern(sum.Test)}, sim...)...)
	}
	run.finish()
	if run.watchPassed {
		return afterPasses
	}
	return afterFails + controlFailure(string(run.output()))
}

// withoutMutant is env less any mutant selection.
func withoutMutant(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, mutants.MutantEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// testPattern is the -run pattern of exactly one (sub)test name.
func testPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// controlFailure is what a failed control replay said: its failure line, or
// the end of its output.
func controlFailure(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "failure "); ok {
			return oneLine(strings.TrimSpace(rest), 200)
		}
	}
	out = strings.TrimSpace(out)
	if len(out) > 300 {
		out = "…" + out[len(out)-300:]
	}
	return fmt.Sprintf("the replay did not pass: %s", oneLine(out, 300))
}

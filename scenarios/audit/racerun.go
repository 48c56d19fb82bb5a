package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// raceRunMark starts the line raceRuns adds to the output after each run
// of a Race mutant's checks, for people: the runs are counted as they end.
const raceRunMark = "windtunnel race run:"

// runRace builds a Race mutant's checks once, under the race detector on
// m's overlay, and runs them mutants.RaceRuns times at each of
// mutants.RaceCPUs, each run a process of its own and every run to its
// end. A process of its own because the detector reports each race once
// per process: a second run in the process that reported it would pass
// whether or not it made the race again. Every run, because one that
// missed the race is what the audit must see (testRun.raceMissed, Judge).
//
// It returns the last failing run's error (an *exec.ExitError, which
// judgeMutant reads as caught), nil when every run passed.
func (r Runner) runRace(ctx context.Context, m mutants.Mutant, overlay, dir string, run *testRun, env map[string]string) error {
	bin := filepath.Join(dir, "race.test")
	if err := r.goTestWithin(ctx, r.mutantTimeout(), run, env, "-race", "-c", "-o", bin, "-overlay="+overlay, m.Pkg); err != nil {
		// A build that go test -json did not report as failed (it ran
		// out of time) is one all the same.
		if !run.buildFailed {
			run.buildFailure(r.importPath(m.Pkg), err.Error())
		}
		return err
	}
	return r.raceRuns(ctx, bin, m, run, env)
}

// runRaceSchemaMutant runs a Race mutant on its family's race schema
// build (mutants.BuildRaceSchema), selected by the environment, as runRace
// runs it on a build of its own: the race-built binary is the costly part,
// one per family instead of one per mutant.
func (r Runner) runRaceSchemaMutant(ctx context.Context, m mutants.Mutant, seeds int, bin string) MutantResult {
	dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", m.ID))
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: seeds, Error: err.Error()}
	}
	res := r.judgeMutant(ctx, m, seeds, dir, func(run *testRun, env map[string]string) error {
		env[mutants.MutantEnv] = m.ID
		return r.raceRuns(ctx, bin, m, run, env)
	})
	res.Schema = true
	return res
}

// raceRuns runs bin, m's race-built checks, mutants.RaceRuns times at each
// of mutants.RaceCPUs, counting each run's outcome in run.
func (r Runner) raceRuns(ctx context.Context, bin string, m mutants.Mutant, run *testRun, env map[string]string) error {
	var last error
	for _, cpu := range strings.Split(mutants.RaceCPUs, ",") {
		for n := 1; n <= mutants.RaceRuns; n++ {
			err := r.raceRun(ctx, bin, m, cpu, run, env)
			var exitErr *exec.ExitError
			switch {
			case err == nil:
				run.raceMissed++
				run.note(fmt.Sprintf("%s %d at -cpu %s: missed", raceRunMark, n, cpu))
			case errors.As(err, &exitErr):
				run.raceCaught++
				run.note(fmt.Sprintf("%s %d at -cpu %s: caught", raceRunMark, n, cpu))
				last = err
			default: // it could not be run: no verdict to give
				return err
			}
		}
	}
	return last
}

// raceRun runs bin, the Race mutant's race-built checks, once at
// GOMAXPROCS cpu, in the package's directory as go test runs it.
func (r Runner) raceRun(ctx context.Context, bin string, m mutants.Mutant, cpu string, out io.Writer, env map[string]string) error {
	limit := r.mutantTimeout()
	ctx, cancel := context.WithTimeout(ctx, limit+time.Minute)
	defer cancel()
	// halt_on_error=1: the run ends at the detector's first report (exit
	// status 66), which is its verdict. Going on would only print report
	// after report.
	// atexit_sleep_ms=0: a race-built binary otherwise sleeps a second
	// before it exits (make race sets the same).
	return r.runBinary(ctx, out, m.Pkg, append(withEnv(env), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), bin, raceRunArgs(m, cpu, limit)...)
}

// raceRunArgs are the arguments of one run of a Race mutant's checks.
func raceRunArgs(m mutants.Mutant, cpu string, limit time.Duration) []string {
	return []string{"-test.run=" + m.Tests, "-test.cpu=" + cpu, "-test.count=1", "-test.timeout=" + limit.String()}
}

// asIs quotes nothing (MutantResult.Catch).
func asIs(s string) string { return s }

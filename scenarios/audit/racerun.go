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

// raceRunMark starts the line raceRuns writes after each run of a Race
// mutant's checks, which raceRunCounts counts.
const raceRunMark = "windtunnel race run:"

// runRace builds a Race mutant's checks once, under the race detector on
// m's overlay, and runs them mutants.RaceRuns times at each of
// mutants.RaceCPUs, each run a process of its own and every run to its
// end. A process of its own because the detector reports each race once
// per process: a second run in the process that reported it would pass
// whether or not it made the race again. Every run, because one that
// missed the race is what the audit must see (raceRunCounts, Judge).
//
// It returns the last failing run's error (an *exec.ExitError, which
// judgeMutant reads as caught), nil when every run passed.
func (r Runner) runRace(ctx context.Context, m mutants.Mutant, overlay, dir string, out io.Writer, env map[string]string) error {
	bin := filepath.Join(dir, "race.test")
	if err := r.goTestWithin(ctx, r.mutantTimeout(), out, env, "-race", "-c", "-o", bin, "-overlay="+overlay, m.Pkg); err != nil {
		// judgeMutant reads go test's own words for it.
		fmt.Fprintf(out, "\n%s [build failed]: %v\n", m.Pkg, err)
		return err
	}
	return r.raceRuns(ctx, bin, m, out, env)
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
	res := r.judgeMutant(ctx, m, seeds, dir, func(out io.Writer, env map[string]string) error {
		env[mutants.MutantEnv] = m.ID
		return r.raceRuns(ctx, bin, m, out, env)
	})
	res.Schema = true
	return res
}

// raceRuns runs bin, m's race-built checks, mutants.RaceRuns times at each
// of mutants.RaceCPUs, marking each run's outcome in out (raceRunCounts).
func (r Runner) raceRuns(ctx context.Context, bin string, m mutants.Mutant, out io.Writer, env map[string]string) error {
	var last error
	for _, cpu := range strings.Split(mutants.RaceCPUs, ",") {
		for run := 1; run <= mutants.RaceRuns; run++ {
			err := r.raceRun(ctx, bin, m, cpu, out, env)
			var exitErr *exec.ExitError
			switch {
			case err == nil:
				fmt.Fprintf(out, "%s %d at -cpu %s: missed\n", raceRunMark, run, cpu)
			case errors.As(err, &exitErr):
				fmt.Fprintf(out, "%s %d at -cpu %s: caught\n", raceRunMark, run, cpu)
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
	cmd := exec.CommandContext(ctx, bin, raceRunArgs(m, cpu, limit)...)
	cmd.Dir = filepath.Join(r.Root, m.Pkg)
	cmd.Stdout, cmd.Stderr = out, out
	// halt_on_error=1: the run ends at the detector's first report (exit
	// status 66), which is its verdict; going on, a run of DR-7's check
	// printed report after report for 1.8 s instead of 0.07 s.
	// atexit_sleep_ms=0: a race-built binary otherwise sleeps a second
	// before it exits (make race sets the same).
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0 halt_on_error=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd.Run()
}

// raceRunArgs are the arguments of one run of a Race mutant's checks.
func raceRunArgs(m mutants.Mutant, cpu string, limit time.Duration) []string {
	return []string{"-test.run=" + m.Tests, "-test.cpu=" + cpu, "-test.count=1", "-test.v", "-test.timeout=" + limit.String()}
}

// raceRunCounts counts the runs raceRuns marked in out: those that failed
// and those that passed.
func raceRunCounts(out string) (caught, missed int) {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, raceRunMark); ok {
			switch {
			case strings.HasSuffix(rest, ": caught"):
				caught++
			case strings.HasSuffix(rest, ": missed"):
				missed++
			}
		}
	}
	return caught, missed
}

// asIs quotes nothing (MutantResult.Catch).
func asIs(s string) string { return s }

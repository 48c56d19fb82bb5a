package goker_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/translate/goker"
)

var (
	all          = flag.Bool("goker.all", false, "fly every kernel (make goker) instead of the sample")
	strategies   = flag.String("goker.strategies", "random,pct,pos,surw,goorder", "strategies of the whole set, comma-separated")
	seeds        = flag.Int("goker.seeds", 20, "seeds per kernel and strategy of the whole set, every one run: the rate's N")
	realRuns     = flag.Int("goker.real", 20, "runs of each kernel on real goroutines with the leak profile")
	table        = flag.String("goker.table", "", "write the whole set's table (markdown) to this file")
	kernels      = flag.String("goker.run", ".*", "the whole set's kernels: a regular expression of their names")
	replay       = flag.String("goker.replay", "", "replay this seed of the kernel -goker.run names under the first of -goker.strategies")
	replayFile   = flag.String("goker.replayfile", "", "replay this replay file (a shrunk run's, under DIR/shrunk) of the kernel -goker.run names")
	workDir      = flag.String("goker.dir", "", "translate into this directory (kept, with the rates, logs and shrunk runs) instead of a temporary one")
	shrink       = flag.Bool("goker.shrink", false, "with -goker.replay: shrink the failing run too")
	wall         = flag.Duration("goker.wall", 5*time.Minute, "wall time one kernel's seeds under one strategy may take, and one replay of a replay file; a run over it is cut off and says so")
	shrinkTries  = flag.Int("goker.shrink.attempts", 200, "re-runs the shrink of a found kernel's seed may make")
	shrinkWall   = flag.Duration("goker.shrink.wall", 30*time.Second, "wall time the shrink of a found kernel's seed may take")
	commandShown = flag.String("goker.command", "", "the command to name in the table's heading (make goker passes its own)")
	longSteps    = flag.Int64("goker.long.steps", 0, "when no strategy proves a kernel's leak and the budget stopped some of a strategy's runs (a step limit, a settle phase cut off), fly that strategy's seeds again with this many steps (0: never)")
	longSettle   = flag.Duration("goker.long.settle", time.Hour, "the settle phase of those longer runs")
	longWall     = flag.Duration("goker.long.wall", 30*time.Minute, "wall time one strategy's longer runs may take, and the seed's runs of their shrink")
	longShrink   = flag.Duration("goker.long.shrink.wall", 10*time.Minute, "wall time the shrink of a seed found only by the longer runs may take: each of its re-runs is one of them")
)

// sample are small kernels whose bugs need a particular interleaving: a
// double lock (AB-BA) and channel/lock mixes. They must be found.
var sample = []string{"Etcd6857", "Kubernetes10182", "Grpc795"}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func prepare(t *testing.T) (string, string, []goker.Kernel) {
	src, err := goker.Dir()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	if *workDir != "" {
		dir = *workDir
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	ks, err := goker.Prepare(src, dir, moduleRoot(t))
	require.NoError(t, err)
	return src, dir, ks
}

// TestGoKerSample translates the whole set (what it cannot take is listed
// with file:line), flies a few kernels over a few seeds each, every seed
// run: the leak oracle proves each kernel's leak. One found seed is shrunk,
// and its shrunk replay file, run again, proves the leak again.
func TestGoKerSample(t *testing.T) {
	if *all {
		t.Skip("-goker.all runs TestGoKerAll")
	}
	_, dir, ks := prepare(t)
	require.GreaterOrEqual(t, len(ks), 60, "GoKer has 63 kernels")
	for _, k := range ks {
		for _, is := range k.Issues {
			assert.True(t, strings.HasPrefix(is.Pos, k.File+":"), "%s: issue %v names its file:line", k.Name, is)
		}
	}
	exe, err := goker.Build(dir)
	require.NoError(t, err)
	const n = 5
	for _, k := range sample {
		r, err := goker.FlyRate(exe, dir, k, "random", n, time.Minute, goker.Budget{})
		require.NoError(t, err)
		assert.Equal(t, n, r.Seeds, "%s: every seed runs, not only up to the first failure", k)
		assert.NotZero(t, r.First, "%s: its leak was not proved in %d seeds", k, n)
		assert.True(t, goker.Definite(r.Message), "%s: %s", k, r.Message)
		if k != sample[0] {
			continue
		}
		// Go's own order runs Etcd5509's child before its yielding parent,
		// which the leak needs: it is found under goorder as well.
		g, err := goker.FlyRate(exe, dir, "Etcd5509", "goorder", n, time.Minute, goker.Budget{})
		require.NoError(t, err)
		assert.NotZero(t, g.First, "Etcd5509: its leak was not proved under goorder in %d seeds", n)
		sh, err := goker.ShrinkSeed(exe, dir, k, "random", r.Seed, 100, 20*time.Second, time.Minute, goker.Budget{})
		require.NoError(t, err)
		assert.Less(t, sh.After, sh.Before, "%s: the shrink took preemptions out", k)
		assert.True(t, sh.Reproduces, "%s: the shrunk replay %s did not prove the leak again: %q", k, sh.Replay, sh.Failure)
	}
}

// TestGoKerReplay runs one found kernel's seed again and shows its report
// (make goker-replay KERNEL=… SEED=… STRATEGY=…), or a shrunk run's replay
// file (FILE=…); it fails unless the run fails again.
func TestGoKerReplay(t *testing.T) {
	if *replay == "" && *replayFile == "" {
		t.Skip("replays run with -goker.replay=SEED or -goker.replayfile=FILE (make goker-replay)")
	}
	_, dir, _ := prepare(t)
	if *replayFile != "" {
		exe, err := goker.Build(dir)
		require.NoError(t, err)
		failure, err := goker.ReplayFile(exe, dir, *kernels, *replayFile, *wall)
		require.NoError(t, err)
		t.Logf("failure: %s", failure)
		assert.True(t, goker.Definite(failure), "the replay of %s did not prove the leak again", *replayFile)
		return
	}
	st := strings.Split(*strategies, ",")[0]
	out, failed, err := goker.Replay(dir, *kernels, st, *replay, *shrink)
	require.NoError(t, err)
	t.Log("\n" + out)
	assert.True(t, failed, "the replayed run of %s did not fail", *kernels)
}

// TestGoKerAll flies every translated kernel over -goker.seeds seeds under
// each strategy, every seed run, shrinks each found kernel's first proved
// seed and replays the shrunk run, runs every kernel on real goroutines
// -goker.real times, and writes the table (make goker).
func TestGoKerAll(t *testing.T) {
	if !*all {
		t.Skip("the whole set runs with -goker.all (make goker)")
	}
	pick, err := regexp.Compile("^(" + *kernels + ")$")
	require.NoError(t, err)
	src, dir, ks := prepare(t)
	exe, err := goker.Build(dir)
	require.NoError(t, err)
	started := time.Now()
	var picked []goker.Kernel
	for _, k := range ks {
		if pick.MatchString(k.Name) {
			picked = append(picked, k)
		}
	}
	// The real runtime's runs mostly wait (each kernel sleeps before its
	// leak profile), so they go on beside the simulator's.
	reals := make(chan map[string]*goker.Real, 1)
	go func() { reals <- realRates(t, src, picked) }()
	strats := strings.Split(*strategies, ",")
	var rows []goker.Row
	for _, k := range picked {
		row := goker.Row{Kernel: k, Rates: map[string]goker.Rate{}}
		if len(k.Issues) == 0 {
			for _, st := range strats {
				r, err := goker.FlyRate(exe, dir, k.Name, st, *seeds, *wall, goker.Budget{})
				if err != nil {
					t.Errorf("%s under %s: %v", k.Name, st, err)
					continue
				}
				row.Rates[st] = r
			}
			flyLonger(t, exe, dir, &row, strats)
			if best, ok := row.Best(strats); ok {
				runWall, shrinkFor := *wall, *shrinkWall
				if best.Budget != (goker.Budget{}) {
					runWall, shrinkFor = *longWall, *longShrink
				}
				sh, err := goker.ShrinkSeed(exe, dir, k.Name, best.Strategy, best.Seed, *shrinkTries, shrinkFor, runWall, best.Budget)
				if err != nil {
					t.Logf("%s: %v", k.Name, err)
					row.ShrinkErr = err.Error()
				} else {
					row.Shrunk = &sh
				}
			}
		}
		t.Logf("%s done, %d of %d (%v)", k.Name, len(rows)+1, len(picked), time.Since(started).Round(time.Second))
		rows = append(rows, row)
	}
	rates := <-reals
	for i := range rows {
		rows[i].Real = rates[rows[i].Kernel.Name]
	}
	var b strings.Builder
	cmd := *commandShown
	if cmd == "" {
		cmd = "go test ./translate/goker -run TestGoKerAll -goker.all " + strings.Join(os.Args[1:], " ")
	}
	fmt.Fprintf(&b, "Measured %s UTC in %v with `%s`: %d seeds per kernel and strategy, every one run; %d runs on real goroutines; shrinks of at most %d re-runs and %v",
		started.UTC().Format("2006-01-02 15:04"), time.Since(started).Round(time.Second), cmd, *seeds, *realRuns, *shrinkTries, *shrinkWall)
	if *longSteps > 0 {
		fmt.Fprintf(&b, "; a kernel no strategy found, flown again %s by each strategy the budget stopped (its shrink within %v)", goker.Budget{Steps: *longSteps, Settle: *longSettle}, *longShrink)
	}
	b.WriteString(".\n\n")
	b.WriteString(goker.Table(strats, rows))
	t.Log("\n" + b.String())
	if *table != "" {
		require.NoError(t, os.WriteFile(*table, []byte(b.String()), 0o644))
	}
}

// flyLonger flies a kernel no strategy found again with -goker.long.steps
// steps, on the same seeds, by each strategy the budget stopped
// (Row.LongerFlights).
func flyLonger(t *testing.T, exe, dir string, row *goker.Row, strats []string) {
	if *longSteps <= 0 {
		return
	}
	long := goker.Budget{Steps: *longSteps, Settle: *longSettle}
	for _, st := range row.LongerFlights(strats) {
		x := row.Rates[st]
		t.Logf("%s under %s: not found, %d runs stopped by the budget; flying its seeds %s", row.Kernel.Name, st, x.Limits+x.Possible, long)
		r, err := goker.FlyRate(exe, dir, row.Kernel.Name, st, *seeds, *longWall, long)
		if err != nil {
			t.Errorf("%s under %s %s: %v", row.Kernel.Name, st, long, err)
			continue
		}
		if row.Long == nil {
			row.Long = map[string]goker.Rate{}
		}
		row.Long[st] = r
	}
}

// realRates runs every picked kernel on real goroutines -goker.real times.
func realRates(t *testing.T, src string, ks []goker.Kernel) map[string]*goker.Real {
	rates := map[string]*goker.Real{}
	if *realRuns == 0 {
		return rates
	}
	exe, err := goker.BuildReal(src, t.TempDir())
	if err != nil {
		t.Errorf("the real runtime: %v", err)
		return rates
	}
	for _, k := range ks {
		r := goker.RealRate(exe, k.Name, *realRuns)
		rates[k.Name] = &r
	}
	return rates
}

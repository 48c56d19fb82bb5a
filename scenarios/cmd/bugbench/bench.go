package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// ResultPrefix starts each line of the driver's output (TestBugBenchDriver)
// that holds an Attempt, as JSON.
const ResultPrefix = "bugbench-result: "

// Options configure a benchmark run.
type Options struct {
	Root    string   // the module root
	Dir     string   // where the overlays and test binaries go
	Mutants []string // the benchmarked mutants to run (empty: all of them)
	Caps    Caps
	// Race builds the stress binary with the race detector, as a Go user's
	// go test -race -count=N runs. Off only for the smoke test, which has
	// seconds, not the minute a race build takes.
	Race bool
	Log  io.Writer // progress, one line per mutant
}

// Report is a benchmark run's outcome.
type Report struct {
	Caps     Caps
	Race     bool
	Attempts []Attempt         // by mutant, then approach in table order
	Skipped  []bugbench.Target // the logic mutants with no workload on real goroutines
}

// Bench builds the schema once (every benchmarked mutant behind its switch),
// a test binary without and one with the race detector, and runs each
// benchmarked mutant under every approach.
func Bench(ctx context.Context, o Options) (Report, error) {
	rep := Report{Caps: o.Caps, Race: o.Race}
	if o.Caps.Seeds < 1 || o.Caps.Wall <= 0 || o.Caps.PCTDepth < 0 {
		return rep, fmt.Errorf("bugbench: caps must be positive, got %d seeds, %v and PCT depth %d", o.Caps.Seeds, o.Caps.Wall, o.Caps.PCTDepth)
	}
	want := map[string]bool{}
	for _, id := range o.Mutants {
		if tg, ok := bugbench.Lookup(id); !ok || tg.Workload == nil {
			return rep, fmt.Errorf("bugbench: %q is not a benchmarked mutant (see docs/bugbench.md)", id)
		}
		want[id] = true
	}
	var ms []mutants.Mutant
	var run []bugbench.Target
	byID := map[string]mutants.Mutant{}
	for _, m := range mutants.All() {
		byID[m.ID] = m
	}
	for _, tg := range bugbench.Targets() {
		switch {
		case tg.Workload == nil:
			rep.Skipped = append(rep.Skipped, tg)
		case len(want) == 0 || want[tg.Mutant]:
			run = append(run, tg)
			ms = append(ms, byID[tg.Mutant])
		}
	}
	sc, err := mutants.BuildSchema(o.Root, o.Dir, ms)
	if err != nil {
		return rep, err
	}
	for _, m := range ms {
		if !sc.In[m.ID] {
			return rep, fmt.Errorf("bugbench: mutant %s is not schematized (its edit spans more than one function)", m.ID)
		}
	}
	plain := filepath.Join(o.Dir, "bugbench.test")
	race := plain
	if err := build(ctx, o.Root, sc.Overlay, plain, false); err != nil {
		return rep, err
	}
	if o.Race {
		race = filepath.Join(o.Dir, "bugbench-race.test")
		if err := build(ctx, o.Root, sc.Overlay, race, true); err != nil {
			return rep, err
		}
	}
	pkgDir := filepath.Join(o.Root, "scenarios", "cmd", "bugbench")
	for _, tg := range run {
		start := time.Now()
		a, err := drive(ctx, plain, pkgDir, tg.Mutant, append(append([]string{}, Strategies...), "synctest"), o.Caps)
		if err != nil {
			return rep, err
		}
		b, err := drive(ctx, race, pkgDir, tg.Mutant, []string{"stress"}, o.Caps)
		if err != nil {
			return rep, err
		}
		// Table order: the strategies, then stress, then synctest.
		rep.Attempts = append(rep.Attempts, a[:len(Strategies)]...)
		rep.Attempts = append(rep.Attempts, b...)
		rep.Attempts = append(rep.Attempts, a[len(Strategies):]...)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "bugbench: %s done in %v\n", tg.Mutant, time.Since(start).Round(time.Second))
		}
	}
	return rep, nil
}

func build(ctx context.Context, root, overlay, out string, race bool) error {
	args := []string{"test", "-c", "-o", out, "-overlay", overlay}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./scenarios/cmd/bugbench")...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bugbench: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// drive runs the test binary on one mutant for the approaches, each within
// the caps, and reads one Attempt per approach.
func drive(ctx context.Context, bin, dir, mutant string, approaches []string, caps Caps) ([]Attempt, error) {
	// Each approach stops itself at the wall cap; a run that does not is
	// stopped here, with a margin for a run already under way.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(len(approaches))*(caps.Wall+2*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestBugBenchDriver$", "-test.count=1",
		"-bugbench.approaches="+strings.Join(approaches, ","),
		fmt.Sprintf("-bugbench.seeds=%d", caps.Seeds), fmt.Sprintf("-bugbench.wall=%v", caps.Wall),
		fmt.Sprintf("-bugbench.pct.depth=%d", caps.pctDepth()))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), mutants.MutantEnv+"="+mutant)
	out, runErr := cmd.CombinedOutput()
	var as []Attempt
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), ResultPrefix)
		if !ok {
			continue
		}
		var a Attempt
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			return nil, fmt.Errorf("bugbench: %s: a result line that is not JSON: %v", mutant, err)
		}
		as = append(as, a)
	}
	if len(as) != len(approaches) {
		return nil, fmt.Errorf("bugbench: %s under %v: %d results for %d approaches (%v)\n%s", mutant, approaches, len(as), len(approaches), runErr, tail(out, 2000))
	}
	if runErr != nil && bytes.Contains(out, []byte("WARNING: DATA RACE")) {
		for i := range as {
			as[i].Note = strings.TrimSpace(as[i].Note + "; the race detector reported a data race")
		}
	}
	return as, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// Families are the claim families' test packages, in CLAIMS.md's order.
var Families = []string{"./scenarios/oc", "./scenarios/ms", "./scenarios/dr", "./scenarios/tw", "./scenarios/lf"}

// Runner runs go test processes for the audit and reports progress.
type Runner struct {
	Root    string        // module root
	Out     string        // output directory (out/)
	Pkgs    []string      // claim family packages (Families)
	Log     io.Writer     // progress lines
	Timeout time.Duration // per go test process
	// MutantTimeout limits each mutant's test process (0: Timeout). A
	// mutant that makes a check loop forever (an infinite loop inside one
	// simulated step, which no step limit sees) is caught when it runs
	// out, as a hang, instead of holding a slot for the whole Timeout.
	MutantTimeout time.Duration
	// Env adds to the claim checks' environment (a shard's slice, or the
	// shards to merge).
	Env map[string]string
	// ShrinkAttempts, when positive, shrinks each caught mutant's first
	// failing seed (simtest's -sim.shrink) with at most that many re-runs,
	// so the audit shows its minimal counterexample.
	ShrinkAttempts int
	// ShrinkMore lets a shrink that ran out of ShrinkAttempts above the
	// goal (shrink.MeetsGoal) run its passes once more with this many
	// more re-runs (simtest's -sim.shrink.more).
	ShrinkMore int
	// ShrinkWall caps each shrink's wall time (0: simtest's default).
	ShrinkWall time.Duration
	// Hang is each mutant run's -sim.hang (0: simtest's default). A
	// mutant that makes a step loop forever is caught as a hang; the
	// default waits long enough for any machine, which a run of
	// thousands of mechanical mutants pays once per such loop.
	Hang time.Duration
	// ClaimProcs is how many packages' claim checks run at once (below 1:
	// one). The timed checks always run alone, after the others.
	ClaimProcs int
	// Timed are the timed checks by package (nil: TimedTests).
	Timed map[string][]string
	// Bin, when set, is a directory of prebuilt test binaries (audit
	// build, Runner.Build): the claim phase and the schema mutants run
	// them and build nothing. Empty: they are built into Out.
	Bin string
	// Catalogue is the file the mutants come from when they are not the
	// project's catalogue's (audit try): a printed command names it.
	Catalogue string
}

// statsLine mirrors simtest.Summary's JSON.
type statsLine struct {
	Test             string `json:"test"`
	Seeds            int    `json:"seeds"`
	Failures         int    `json:"failures"`
	FirstFailure     int    `json:"first_failure"`
	FirstFailingSeed string `json:"first_failing_seed"`
	FirstFailureMsg  string `json:"first_failure_msg"`
}

func readStats(path string) ([]statsLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []statsLine
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var s statsLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// CheckDeterminism makes the claim phase run each check's first n regular
// seeds (and every corpus seed) twice, and every proof's exploration, and
// fail a check whose two runs differ in their trace. It is simtest's
// -sim.determinism sample riding along with a run the audit makes anyway:
// make test pays for the checks' compilation and fixed costs once instead of
// in a determinism stage of its own. Env is the claim phase's only: the
// mutants never run twice.
func (r *Runner) CheckDeterminism(n int) {
	if n <= 0 {
		return
	}
	if r.Env == nil {
		r.Env = map[string]string{}
	}
	r.Env["WINDTUNNEL_SIM_DETERMINISM"] = "true"
	r.Env["WINDTUNNEL_SIM_DETERMINISM_SEEDS"] = fmt.Sprint(n)
}

// goTest runs go test -json with the simulation settings in env (the
// environment form of the -sim flags reaches every package of a pattern,
// also those that define no flags); out gets its events (testRun).
func (r Runner) goTest(ctx context.Context, out io.Writer, env map[string]string, args ...string) error {
	return r.goTestWithin(ctx, r.Timeout, out, env, args...)
}

// goTestWithin is goTest with a limit of its own.
func (r Runner) goTestWithin(ctx context.Context, limit time.Duration, out io.Writer, env map[string]string, args ...string) error {
	// The process's own -timeout first, so that a hang prints its running
	// tests; the context's, a minute later, in case it does not exit.
	ctx, cancel := context.WithTimeout(ctx, limit+time.Minute)
	defer cancel()
	// -p 1: the wall-clock claims (DR-8, TW-9) measure ratios on a machine
	// that no other test binary of this run is loading.
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json", "-count=1", "-p", "1", "-timeout", limit.String()}, args...)...)
	cmd.Dir = r.Root
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd.Run()
}

// SimEnv is the environment of one audit go test: seeds, no corpus
// recording, and where claim records, stats and artifacts go.
func SimEnv(seeds int, claimsFile, statsFile, artifacts string) map[string]string {
	return map[string]string{
		"WINDTUNNEL_SIM_SEEDS":  fmt.Sprint(seeds),
		"WINDTUNNEL_SIM_RECORD": "false",
		"WINDTUNNEL_SIM_STATS":  statsFile,
		"WINDTUNNEL_SIM_OUT":    artifacts,
		"WINDTUNNEL_CLAIMS":     claimsFile,
	}
}

// RunClaims runs the scenario tests matching pattern over seeds (0: each
// check's own default count) and returns the claim records they wrote and
// the tests that failed (FailedTests). Progress (each test's result and
// each claim record) streams to r.Log. A failing test is not an error here:
// a claim check's failure is recorded as its claim violated, and any other
// failure is for Judge to report.
//
// Each package's checks run in a process of their own, up to r.ClaimProcs
// at once. The timed checks (TimedTests) are the exception: they run
// first, one process at a time, before any other process of the audit
// starts, so none loads the machine while they measure. The records, the
// stats and the output are then put together package by package in
// r.Pkgs' order, each package's untimed part before its timed one. That
// order does not depend on the order the processes ended in, so any number
// of processes at once gives the same files and the same audit. RunAudit
// runs the mutants in the same budget.
func (r Runner) RunClaims(ctx context.Context, pattern string, seeds int) ([]findings.Record, []string, error) {
	c, err := r.startClaims(ctx, pattern, seeds)
	if err != nil {
		return nil, nil, err
	}
	c.runTimed()
	c.runUntimed(newSlots(r.ClaimProcs))
	return c.join()
}

// claimPhase is a claim phase whose binaries are built: its parts run
// through runTimed and runUntimed, then join puts their results together.
type claimPhase struct {
	dir   string
	parts []claimPart
	run   func(i int) // runs parts[i] to its end
}

// startClaims splits the claim phase into its parts and builds (or finds,
// with r.Bin) their binaries.
func (r Runner) startClaims(ctx context.Context, pattern string, seeds int) (*claimPhase, error) {
	timed := r.Timed
	if timed == nil {
		timed = TimedTests
	}
	parts, err := claimParts(r.Pkgs, pattern, timed)
	if err != nil {
		return nil, err
	}
	// The binaries first: a -bin directory that is refused leaves the
	// last run's results where they are.
	bins, notBuilt, err := r.familyBinaries(ctx, r.Pkgs)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(r.Out, "claims")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "parts"), 0o755); err != nil {
		return nil, err
	}
	artDir, _ := filepath.Abs(filepath.Join(dir, "artifacts"))
	var logMu sync.Mutex // progress lines of processes running at once
	run := func(i int) {
		p := &parts[i]
		p.files(filepath.Join(dir, "parts"), i)
		env := SimEnv(seeds, p.recFile, p.statsFile, artDir)
		if seeds == 0 {
			delete(env, "WINDTUNNEL_SIM_SEEDS")
		}
		for k, v := range r.Env {
			env[k] = v
		}
		run := &testRun{progress: func(line string) {
			logMu.Lock()
			fmt.Fprintln(r.Log, "  "+line)
			logMu.Unlock()
		}}
		if out, ok := notBuilt[p.pkg]; ok {
			run.buildFailure(r.importPath(p.pkg), out)
		} else {
			p.err = r.runTestBinary(ctx, run, env, bins[p.pkg], *p)
		}
		run.finish()
		p.failed, p.output = run.failed, run.output()
	}
	return &claimPhase{dir: dir, parts: parts, run: run}, nil
}

// runTimed runs the timed parts one after another. Its caller has started
// no other process of the audit yet: the timed checks measure alone.
func (c *claimPhase) runTimed() {
	for i := range c.parts {
		if c.parts[i].timed {
			c.run(i)
		}
	}
}

// runUntimed runs the untimed parts, each in a slot of s
// taken at priorityClaims, and returns when every one has ended.
func (c *claimPhase) runUntimed(s *slots) {
	var wg sync.WaitGroup
	for _, i := range untimedParts(c.parts) {
		release := s.acquire(priorityClaims)
		wg.Go(func() {
			defer release()
			c.run(i)
		})
	}
	wg.Wait()
}

func (c *claimPhase) join() ([]findings.Record, []string, error) {
	return joinClaimParts(c.dir, c.parts)
}

// joinClaimParts writes the parts' records, stats and output, in the parts'
// order, to dir's claims.jsonl, stats.jsonl and output.txt, and returns
// the records and the failed tests.
func joinClaimParts(dir string, parts []claimPart) ([]findings.Record, []string, error) {
	var recs, stats, output bytes.Buffer
	var failed []string
	for _, p := range parts {
		for _, f := range []struct {
			path string
			to   *bytes.Buffer
		}{{p.recFile, &recs}, {p.statsFile, &stats}} {
			data, err := os.ReadFile(f.path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, err
			}
			f.to.Write(data)
		}
		output.Write(p.output)
		var exitErr *exec.ExitError
		if p.err != nil && !errors.As(p.err, &exitErr) {
			return nil, nil, fmt.Errorf("go test %s: %v", p.pkg, p.err)
		}
		failed = append(failed, p.failed...)
		if p.err != nil && len(p.failed) == 0 {
			failed = append(failed, p.pkg+": go test failed without a failing test or package line (see "+filepath.Join(dir, "output.txt")+")")
		}
	}
	recFile := filepath.Join(dir, "claims.jsonl")
	for path, data := range map[string][]byte{ //windtunnel:unordered three independent files
		recFile:                           recs.Bytes(),
		filepath.Join(dir, "stats.jsonl"): stats.Bytes(),
		filepath.Join(dir, "output.txt"):  output.Bytes(),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, nil, err
		}
	}
	if recs.Len() == 0 {
		return nil, failed, fmt.Errorf("the scenario tests wrote no claim records (see %s)", filepath.Join(dir, "output.txt"))
	}
	recList, err := findings.Read(recFile)
	return recList, failed, err
}

// RunMutant applies m with an overlay of its own, runs its checks over
// seeds, and says whether and after how many seeds they caught it.
func (r Runner) RunMutant(ctx context.Context, m mutants.Mutant, seeds int) MutantResult {
	dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", m.ID))
	_ = os.RemoveAll(dir)
	overlay, err := m.Apply(r.Root, dir)
	if err != nil {
		res := MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: seeds}
		res.Error = err.Error()
		return res
	}
	return r.judgeMutant(ctx, m, seeds, dir, func(run *testRun, env map[string]string) error {
		if m.Race {
			return r.runRace(ctx, m, overlay, dir, run, env)
		}
		r.nameMutant(env, m)
		return r.goTestWithin(ctx, r.mutantTimeout(), run, env, overlayTestArgs(m, overlay)...)
	})
}

// nameMutant tells the test binary which mutant it flies: its failing
// seeds stay out of the corpus, and the commands it prints apply the
// mutant.
func (r Runner) nameMutant(env map[string]string, m mutants.Mutant) {
	env[mutants.MutantEnv] = m.ID
	if r.Catalogue != "" {
		env[simtest.MutantsEnv] = r.Catalogue
	}
}

// reproduceCommand is the make command that runs a catch again on the
// mutant: the seed that failed, or, with seed "", every seed of the test
// at the budget it failed with.
func (r Runner) reproduceCommand(m mutants.Mutant, test, seed string, seeds int) string {
	if seed != "" {
		return simtest.MakeCommand("replay", m.ID, r.Catalogue, m.Pkg, test, seed, "")
	}
	return simtest.MakeCommand("replay", m.ID, r.Catalogue, m.Pkg, test, "", fmt.Sprintf("-sim.seeds=%d", seeds))
}

// overlayTestArgs are go test's arguments for m on its own overlay. A
// Race mutant runs otherwise (runRace).
func overlayTestArgs(m mutants.Mutant, overlay string) []string {
	return []string{"-overlay=" + overlay, "-failfast", "-run", m.Tests, m.Pkg}
}

// runSchemaMutant runs m on its family's schema test binary, selected by
// the environment (mutants.MutantEnv).
func (r Runner) runSchemaMutant(ctx context.Context, m mutants.Mutant, seeds int, binary string) MutantResult {
	dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", m.ID))
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: seeds, Error: err.Error()}
	}
	return r.judgeMutant(ctx, m, seeds, dir, func(run *testRun, env map[string]string) error {
		limit := r.mutantTimeout()
		ctx, cancel := context.WithTimeout(ctx, limit+time.Minute)
		defer cancel()
		env[mutants.MutantEnv] = m.ID
		return r.runBinary(ctx, run, m.Pkg, withEnv(env), binary, "-test.run="+m.Tests, "-test.failfast", "-test.count=1", "-test.timeout="+limit.String())
	})
}

// judgeMutant runs a mutant's checks through run and reads the outcome.
// Both ways of running a mutant pass -failfast: a mutant is caught by its
// first failure. Once a check, or one of its configurations (such as
// DR-2's 4,000 points per key before its 400,000), has failed, no further
// test or subtest is started. The verdict, the first failing seed and its
// shrink are the same, and the configurations after the catch cost
// nothing.
//
// A mutant whose checks fly seeds is screened first: its checks run on one
// seed each (findings.ScreenEnv), judged only on what that seed breaks on its
// own. Most mutants are caught there, by their first seed. Each check
// before the catching one then costs one seed instead of its whole budget.
// One seed is the same
// run whatever the budget (a seed is defined by its test and index), so a
// catch there is the catch the full run would make at that seed. A mutant
// the screen does not catch runs again over its whole budget, judged in
// full, as if there had been no screen; it pays one seed per check more.
// A Race mutant flies no seeds, and a budget of one seed is its own screen.
func (r Runner) judgeMutant(ctx context.Context, m mutants.Mutant, seeds int, dir string, run func(run *testRun, env map[string]string) error) MutantResult {
	budget := seeds
	if m.Seeds > 0 {
		budget = m.Seeds
	}
	if !m.Race && budget > 1 {
		res := r.judgeRun(m, 1, true, dir, run)
		if ctx.Err() != nil {
			return interrupted(ctx, m, budget)
		}
		if res.Caught || res.Error != "" {
			res.SeedBudget, res.Screened = budget, true
			return res
		}
		for _, f := range []string{"stats.jsonl", "claims.jsonl", "artifacts", "output.txt", "events.jsonl"} {
			if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
				res.Error = fmt.Sprintf("clearing the screen's output: %v", err)
				return res
			}
		}
	}
	res := r.judgeRun(m, budget, false, dir, run)
	if ctx.Err() != nil {
		return interrupted(ctx, m, budget)
	}
	return res
}

// interrupted is the result of a mutant whose run ended with the whole
// run's context (the user's interrupt): its killed process failed like a
// check, which says nothing of the mutant.
func interrupted(ctx context.Context, m mutants.Mutant, budget int) MutantResult {
	return MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: budget,
		Error: fmt.Sprintf("interrupted before its verdict (%v)", context.Cause(ctx))}
}

// judgeRun runs a mutant's checks once, over seeds seeds (screening: see
// judgeMutant), and reads the outcome.
func (r Runner) judgeRun(m mutants.Mutant, seeds int, screen bool, dir string, run func(run *testRun, env map[string]string) error) MutantResult {
	res := MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: seeds}
	statsFile := filepath.Join(dir, "stats.jsonl")
	env := SimEnv(seeds, filepath.Join(dir, "claims.jsonl"), statsFile, filepath.Join(dir, "artifacts"))
	if screen {
		env[findings.ScreenEnv] = "1"
	}
	// Nothing reads a caught seed's own artifacts (its full trace and
	// replay file). Its first failure is reported by name and seed, which
	// the command in its output.txt re-runs. Its counterexample is the
	// shrunk run, whose replay file, trace, interleaving and timeline the
	// shrink writes whatever this says (shrunk/ under the seed's artifact
	// directory). Writing them would re-run every caught seed with its
	// full trace on.
	env["WINDTUNNEL_SIM_ARTIFACTS"] = "false"
	// One seed at a time: a mutant is caught by its first failing seed,
	// most often the first. The seeds run ahead of it beside it
	// (-sim.parallel's default, one per core) are work thrown away when it
	// fails, on cores the audit's other processes are using. A mutant that
	// needs many seeds gets no core the budget has not already given out.
	env["WINDTUNNEL_SIM_PARALLEL"] = "1"
	if r.Hang > 0 {
		env["WINDTUNNEL_SIM_HANG"] = r.Hang.String()
	}
	if r.ShrinkAttempts > 0 {
		env["WINDTUNNEL_SIM_SHRINK"] = "true"
		env["WINDTUNNEL_SIM_SHRINK_ATTEMPTS"] = fmt.Sprint(r.ShrinkAttempts)
		if r.ShrinkMore > 0 {
			env["WINDTUNNEL_SIM_SHRINK_MORE"] = fmt.Sprint(r.ShrinkMore)
		}
		if r.ShrinkWall > 0 {
			env["WINDTUNNEL_SIM_SHRINK_WALL"] = r.ShrinkWall.String()
		}
	}
	events := &testRun{}
	if f, err := os.Create(filepath.Join(dir, "events.jsonl")); err == nil {
		w := bufio.NewWriter(f)
		events.raw = w
		defer func() {
			_ = w.Flush()
			_ = f.Close()
		}()
	}
	runErr := run(events, env)
	events.finish()
	_ = os.WriteFile(filepath.Join(dir, "output.txt"), events.output(), 0o644)
	if m.Race {
		res.RaceRunsCaught, res.RaceRunsMissed = events.raceCaught, events.raceMissed
	}
	var exitErr *exec.ExitError
	switch {
	case events.buildFailed:
		res.Error = "the mutant does not build: see " + filepath.Join(dir, "output.txt")
		return res
	case events.noTests:
		res.Error = fmt.Sprintf("no claim check in %s matches %q", m.Pkg, m.Tests)
		return res
	case runErr == nil:
		return res // survived
	case !errors.As(runErr, &exitErr):
		res.Error = fmt.Sprintf("running the checks: %v", runErr)
		return res
	case events.packages == 0:
		// go test failed before any package ran (its own error, not a
		// test's): nothing was judged.
		res.Error = "the checks did not run: see " + filepath.Join(dir, "output.txt")
		return res
	}
	res.Caught = true
	res.SeedsToCatch = 1
	stats, err := readStats(statsFile)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	for _, s := range stats {
		if s.Failures > 0 {
			res.SeedsToCatch = s.FirstFailure
			res.CaughtBy = fmt.Sprintf("%s (seed %s: %s)", s.Test, s.FirstFailingSeed, oneLine(s.FirstFailureMsg, 120))
			if !m.Race {
				res.Reproduce = r.reproduceCommand(m, s.Test, s.FirstFailingSeed, seeds)
			}
			break
		}
	}
	if r.ShrinkAttempts > 0 {
		res.Shrunk = readShrunk(filepath.Join(dir, "artifacts"), res.CaughtBy)
	}
	if res.CaughtBy == "" {
		// No single seed failed: the test failed on a verdict over all its
		// seeds (a documented deviation no longer reproduced, a ratio over
		// the run). It needed every seed it ran.
		res.CaughtBy = events.catch()
		top, _, _ := strings.Cut(res.CaughtBy, "/")
		top, _, _ = strings.Cut(top, " ")
		// The verdict that failed is that of the test's last seeded run:
		// -failfast starts nothing after it. It may be a subtest's (DR-11's
		// perKey=4000), which the first failed test does not name.
		var verdict *statsLine
		for i := range stats {
			if stats[i].Test == top || strings.HasPrefix(stats[i].Test, top+"/") {
				verdict = &stats[i]
			}
		}
		if verdict != nil {
			res.SeedsToCatch = verdict.Seeds
			res.CaughtBy = fmt.Sprintf("%s (its verdict over all %d seeds)", verdict.Test, verdict.Seeds)
			if !m.Race {
				res.Reproduce = r.reproduceCommand(m, verdict.Test, "", seeds)
			}
		}
	}
	return res
}

// mutantTimeout is the limit of one mutant's test process.
func (r Runner) mutantTimeout() time.Duration {
	if r.MutantTimeout > 0 {
		return r.MutantTimeout
	}
	return r.Timeout
}

// RunMutants runs ms with up to parallel processes at once and returns
// their results in catalogue order. With schemata, the mutants that edit
// one function share one test binary per claim family (mutant schemata,
// mutants.BuildSchema): one build for the whole catalogue instead of one
// per mutant. The others, and every mutant of a family whose schema build
// fails, get a build of their own.
func (r Runner) RunMutants(ctx context.Context, ms []mutants.Mutant, seeds, parallel int, schemata bool) []MutantResult {
	b := r.buildMutants(ctx, ms, parallel, schemata)
	return r.runMutants(ctx, ms, seeds, b, newSlots(parallel))
}

// mutantBuilds are the schema builds of a mutant phase: the mutants each
// serves and its binary by family package.
type mutantBuilds struct {
	inSchema map[string]bool
	binaries map[string]string // family package -> schema test binary
	// inRace and raceBins are the race schema's: the Race mutants it
	// serves, and its race-built test binary by family package.
	inRace   map[string]bool
	raceBins map[string]string
}

// buildMutants makes (or, with r.Bin, finds) the schema builds of ms, none
// without schemata.
func (r Runner) buildMutants(ctx context.Context, ms []mutants.Mutant, parallel int, schemata bool) mutantBuilds {
	b := mutantBuilds{binaries: map[string]string{}, raceBins: map[string]string{}}
	if schemata {
		b.inSchema, b.binaries = r.buildSchemata(ctx, ms, parallel)
		if r.Bin == "" { // prebuilt binaries hold no race build: Race mutants get their own
			dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", "_race_schema"))
			b.inRace, b.raceBins = r.writeRaceSchemata(ctx, dir, ms, parallel)
		}
	}
	return b
}

// runMutants runs ms, each in a slot of s taken at priorityMutants, in
// catalogue order, and returns their results in that order.
func (r Runner) runMutants(ctx context.Context, ms []mutants.Mutant, seeds int, b mutantBuilds, s *slots) []MutantResult {
	results := make([]MutantResult, len(ms))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	phaseStart := time.Now()
	for i, m := range ms {
		release := s.acquire(priorityMutants)
		wg.Go(func() {
			defer release()
			start := time.Now()
			var res MutantResult
			if bin, ok := b.raceBins[m.Pkg]; ok && b.inRace[m.ID] {
				res = r.runRaceSchemaMutant(ctx, m, seeds, bin)
			} else if bin, ok := b.binaries[m.Pkg]; ok && b.inSchema[m.ID] {
				res = r.runSchemaMutant(ctx, m, seeds, bin)
				res.Schema = true
			} else {
				res = r.RunMutant(ctx, m, seeds)
				if sum := res.Shrunk; sum != nil && sum.ShrinkFail == "" && !sum.Controlled && sum.Replay != "" {
					res.AfterControl = r.controlAfter(ctx, m, sum, b.binaries[m.Pkg])
				}
			}
			results[i] = res
			mu.Lock()
			done++
			state := "SURVIVED"
			switch {
			case res.Error != "":
				state = "ERROR: " + res.Error
			case res.Caught:
				state = res.Catch(asIs)
			}
			fmt.Fprintf(r.Log, "  [mutant %d/%d%s] %-45s %s (%v)\n", done, len(ms), timeLeft(time.Since(phaseStart), done, len(ms)), m.ID, state, time.Since(start).Round(100*time.Millisecond))
			if res.Reproduce != "" {
				fmt.Fprintf(r.Log, "      reproduce: %s\n", res.Reproduce)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return results
}

// timeLeft is a long phase's estimate of its remaining time, from the
// mean so far: none before ten mutants have ended (too few to say) or
// after the last.
func timeLeft(elapsed time.Duration, done, total int) string {
	if done < 10 || done >= total {
		return ""
	}
	left := elapsed / time.Duration(done) * time.Duration(total-done)
	return fmt.Sprintf(", about %v left", left.Round(time.Minute))
}

// MutantPhase is an audit's mutant phase: the mutants to run (none, in a
// shard that holds none of them), each over Seeds seeds, from the schema
// builds when Schemata (RunMutants).
type MutantPhase struct {
	Mutants  []mutants.Mutant
	Seeds    int
	Schemata bool
}

// RunAudit runs a whole audit's processes: the claim phase of RunClaims
// and, unless mp is nil, the mutants of RunMutants, in one budget of
// r.ClaimProcs processes at once (at least one). Everything is built first,
// the claim binaries and the schema builds side by side. Then the timed
// checks run alone. Then the untimed claim parts and the mutants share the
// budget, the claim parts first (slots), so that neither phase's tail
// leaves a core idle while the other waits. The results are
// the ones the two calls one after the other would give, in the same
// order: only the progress lines interleave. The mutants' results are nil
// without a mutant phase.
func (r Runner) RunAudit(ctx context.Context, pattern string, seeds int, mp *MutantPhase) ([]findings.Record, []string, []MutantResult, error) {
	r.Log = &lockedWriter{w: r.Log}
	var c *claimPhase
	var cerr error
	var b mutantBuilds
	var wg sync.WaitGroup
	wg.Go(func() { c, cerr = r.startClaims(ctx, pattern, seeds) })
	if mp != nil {
		wg.Go(func() { b = r.buildMutants(ctx, mp.Mutants, r.ClaimProcs, mp.Schemata) })
	}
	wg.Wait()
	if cerr != nil {
		return nil, nil, nil, cerr
	}
	c.runTimed()
	s := newSlots(r.ClaimProcs)
	var results []MutantResult
	if mp != nil {
		wg.Go(func() { results = r.runMutants(ctx, mp.Mutants, mp.Seeds, b, s) })
	}
	c.runUntimed(s)
	wg.Wait()
	recs, failed, err := c.join()
	return recs, failed, results, err
}

// lockedWriter serializes the writes of the phases' goroutines: each of
// their progress lines is one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// VerifySchemata runs every schematized mutant of ms both ways: on the
// schema build (the race schema's, for a Race mutant) and on an overlay of
// its own. It lists every mutant whose outcome differs: caught or not, the
// seeds it took or the race-detector runs that caught it, the check that
// caught it. The faster path must not hide a survivor.
func (r Runner) VerifySchemata(ctx context.Context, ms []mutants.Mutant, seeds, parallel int) []string {
	b := r.buildMutants(ctx, ms, parallel, true)
	var problems []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(parallel, 1))
	for _, m := range ms {
		var schema func() MutantResult
		if bin, ok := b.raceBins[m.Pkg]; ok && b.inRace[m.ID] {
			schema = func() MutantResult { return r.runRaceSchemaMutant(ctx, m, seeds, bin) }
		} else if bin, ok := b.binaries[m.Pkg]; ok && b.inSchema[m.ID] {
			schema = func() MutantResult { return r.runSchemaMutant(ctx, m, seeds, bin) }
		} else {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a := schema()
			b := r.RunMutant(ctx, m, seeds)
			same := a.Caught == b.Caught && a.SeedsToCatch == b.SeedsToCatch && a.CaughtBy == b.CaughtBy && (a.Error == "") == (b.Error == "") &&
				a.RaceRunsCaught == b.RaceRunsCaught && a.RaceRunsMissed == b.RaceRunsMissed
			mu.Lock()
			defer mu.Unlock()
			state := "same"
			if !same {
				state = "DIFFERS"
				problems = append(problems, fmt.Sprintf("mutant %s: schema build caught=%v@%d by %q, own build caught=%v@%d by %q",
					m.ID, a.Caught, a.SeedsToCatch, a.CaughtBy, b.Caught, b.SeedsToCatch, b.CaughtBy))
			}
			fmt.Fprintf(r.Log, "  [verify] %-45s %s (caught=%v@%d)\n", m.ID, state, b.Caught, b.SeedsToCatch)
		}()
	}
	wg.Wait()
	slices.Sort(problems)
	return problems
}

// buildSchemata makes the schema builds of ms: the prebuilt ones in r.Bin
// (audit build), else built now into r.Out/mutants/_schema.
func (r Runner) buildSchemata(ctx context.Context, ms []mutants.Mutant, parallel int) (map[string]bool, map[string]string) {
	if r.Bin != "" {
		return r.prebuiltSchemata(ms)
	}
	dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", "_schema"))
	return r.writeSchemata(ctx, dir, ms, parallel)
}

// writeSchemata writes the schema overlay into dir, builds one test binary
// per claim family that has schematized mutants, and records both in dir's
// manifest.
func (r Runner) writeSchemata(ctx context.Context, dir string, ms []mutants.Mutant, parallel int) (map[string]bool, map[string]string) {
	sc, binaries, ok := r.schemaBuilds(ctx, dir, ms, parallel, false)
	if ok {
		if err := writeManifest(dir, sc, binaries); err != nil {
			fmt.Fprintf(r.Log, "  mutant schemata: %v\n", err)
		}
	}
	return sc.In, binaries
}

// writeRaceSchemata writes the race schema overlay of ms's Race mutants
// into dir and builds one race-detector test binary per claim family that
// has some. A family whose build fails leaves its Race mutants to builds
// of their own.
func (r Runner) writeRaceSchemata(ctx context.Context, dir string, ms []mutants.Mutant, parallel int) (map[string]bool, map[string]string) {
	sc, binaries, _ := r.schemaBuilds(ctx, dir, ms, parallel, true)
	return sc.In, binaries
}

// schemaBuilds writes into dir the schema of ms's Race mutants (race) or
// of the others, builds its test binaries (under the race detector for
// race), and logs what they serve. ok is false when the schema could not
// be written.
func (r Runner) schemaBuilds(ctx context.Context, dir string, ms []mutants.Mutant, parallel int, race bool) (sc mutants.Schema, binaries map[string]string, ok bool) {
	_ = os.RemoveAll(dir)
	build, name, what, flags := mutants.BuildSchema, "mutant schemata", "mutants (Race mutants aside)", []string(nil)
	if race {
		build, name, what, flags = mutants.BuildRaceSchema, "race schemata", "Race mutants", []string{"-race"}
	}
	sc, err := build(r.Root, dir, ms)
	if err != nil {
		fmt.Fprintf(r.Log, "  %s: %v; every mutant gets a build of its own\n", name, err)
		return sc, map[string]string{}, false
	}
	var pkgs []string
	total := 0 // the mutants this schema is for
	for _, m := range ms {
		if m.Race != race {
			continue
		}
		total++
		if sc.In[m.ID] && !slices.Contains(pkgs, m.Pkg) {
			pkgs = append(pkgs, m.Pkg)
		}
	}
	if total == 0 {
		return sc, map[string]string{}, true
	}
	start := time.Now()
	binaries, failed := r.buildTests(ctx, dir, pkgs, sc.Overlay, parallel, flags...)
	for _, pkg := range pkgs {
		if out, ok := failed[pkg]; ok {
			fmt.Fprintf(r.Log, "  %s: the build of %s failed (its mutants get builds of their own): %s\n", name, pkg, oneLine(out, 200))
		}
	}
	n := 0
	for _, m := range ms {
		if _, built := binaries[m.Pkg]; built && sc.In[m.ID] {
			n++
		}
	}
	fmt.Fprintf(r.Log, "  %s: %d of %d %s in %d builds (%v); %d get builds of their own\n",
		name, n, total, what, len(binaries), time.Since(start).Round(time.Second), total-n)
	return sc, binaries, true
}

// Commit describes the checked-out commit, for the report.
func Commit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short=12", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	st := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	st.Dir = root
	if o, err := st.Output(); err == nil && len(bytes.TrimSpace(o)) > 0 {
		c += "+uncommitted"
	}
	return c
}

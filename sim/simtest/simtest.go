// Package simtest runs deterministic simulations as go test subtests.
//
// Each seed is a subtest named seed=0x…; seeds that once failed (the corpus
// under testdata/windtunnel) run first; a failing seed prints one block with
// the seed, strategy, run header, failure, trace tail, artifacts and one
// command that reproduces exactly that run:
//
//	func TestLostUpdate(t *testing.T) {
//		simtest.Run(t, simtest.Options{Seeds: 200}, func(s *sim.Sim) error {
//			// build the world, run the workload, then check
//			return nil // or an error naming the violated claim
//		})
//	}
//
// Flags (after go test's own, e.g. go test ./scenarios -sim.seeds=1000):
//
//	-sim.seed=0x5eed      run only this seed
//	-sim.seeds=N          seeds per test (default: the test's own)
//	-sim.strategy=random  or pct
//	-sim.pct.depth=3      PCT bug depth; -sim.pct.steps=K (0: calibrated)
//	-sim.determinism      run every seed twice, fail on any trace difference
//	-sim.replay=FILE      replay a recorded schedule (with -sim.seed)
//	-sim.out=DIR          failure artifacts (trace.txt, decisions.txt)
//	-sim.record=false     do not add failing seeds to the corpus
//	-sim.keepgoing        run all seeds even after a failure
//	-sim.steptime=1us     virtual time per scheduling step
//	-sim.maxsteps=N       override the step limit
//	-sim.stats=FILE       append a JSON summary line per test
//	-sim.trace=FILE       with -sim.seed: write the full trace of that run
package simtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// Options configures one simulation test.
type Options struct {
	// Seeds is the number of seeds go test runs by default; -sim.seeds
	// overrides it (make sim runs more).
	Seeds int
	// Config is the base configuration of every run: limits and step time.
	// The harness sets Seed, Strategy and the trace options.
	Config sim.Config
}

// Body is the root task of one run: it builds the world, runs the workload,
// checks the outcome and returns nil, or an error naming the violated claim.
type Body func(s *sim.Sim) error

// Summary describes the seeds a test ran.
type Summary struct {
	Test             string        `json:"test"`
	Strategy         string        `json:"strategy"`
	Seeds            int           `json:"seeds"`
	Failures         int           `json:"failures"`
	FirstFailure     int           `json:"first_failure"` // 1-based position of the first failing seed, 0 if none
	FirstFailingSeed string        `json:"first_failing_seed,omitempty"`
	FirstFailureMsg  string        `json:"first_failure_msg,omitempty"`
	Steps            int64         `json:"steps"`
	Virtual          time.Duration `json:"virtual_ns"`
	Wall             time.Duration `json:"wall_ns"`
}

// SeedsPerSecond is the throughput of the test's seeds.
func (s Summary) SeedsPerSecond() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Seeds) / s.Wall.Seconds()
}

// Speedup is virtual time divided by wall time: how much faster than real
// time the simulation ran.
func (s Summary) Speedup() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return s.Virtual.Seconds() / s.Wall.Seconds()
}

// SeedAt returns the i-th regular seed of a test. Seeds are spread over the
// 64-bit space (splitmix64) and differ between tests, so two tests never
// explore the same schedules by accident.
func SeedAt(test string, i int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(test))
	x := h.Sum64() + uint64(i)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

type plannedSeed struct {
	seed   uint64
	origin string
}

// Run runs body once per seed as subtests of t and returns a summary. It
// fails t with a clear message on invalid flags.
func Run(t *testing.T, opts Options, body Body) Summary {
	t.Helper()
	top := strings.SplitN(t.Name(), "/", 2)[0]
	sum := Summary{Test: t.Name()}
	st, err := readSettings(opts.Seeds)
	if err != nil {
		t.Fatalf("windtunnel: %v", err)
		return sum
	}
	plan, err := planSeeds(t.Name(), top, st)
	if err != nil {
		t.Fatalf("windtunnel: corpus: %v", err)
		return sum
	}
	pctSteps := st.pctSteps
	if st.strategy == "pct" && pctSteps == 0 && st.replay == nil {
		pctSteps = calibrate(opts, plan[0].seed, st, body)
	}
	sum.Strategy = st.strategyFor(max(pctSteps, 1)).String()
	start := time.Now()
	lastProgress := start
	for i, ps := range plan {
		if sum.Failures > 0 && !st.keepGoing {
			break
		}
		name := fmt.Sprintf("seed=%#x", ps.seed)
		t.Run(name, func(t *testing.T) {
			var trace *bytes.Buffer
			if st.trace != "" {
				trace = &bytes.Buffer{}
			}
			res, failure := runOnce(opts, ps.seed, st, pctSteps, body, trace)
			if trace != nil {
				if err := os.WriteFile(st.trace, trace.Bytes(), 0o644); err != nil {
					t.Errorf("windtunnel: -sim.trace: %v", err)
				} else {
					t.Logf("windtunnel: trace of seed %#x (%d events, hash %#016x) written to %s", ps.seed, res.Events, res.Hash, st.trace)
				}
			}
			sum.Seeds++
			sum.Steps += res.Steps
			sum.Virtual += res.Elapsed
			if failure == "" && st.determinism {
				again, _ := runOnce(opts, ps.seed, st, pctSteps, body, nil)
				if again.Hash != res.Hash {
					failure = "determinism: the same seed ran twice with different traces\n" +
						firstDifference(opts, ps.seed, st, pctSteps, body)
				}
			}
			if failure == "" {
				return
			}
			sum.Failures++
			if sum.FirstFailure == 0 {
				sum.FirstFailure = i + 1
				sum.FirstFailingSeed = fmt.Sprintf("%#x", ps.seed)
				sum.FirstFailureMsg = firstLine(failure)
			}
			report := failureReport(t, opts, ps, st, pctSteps, body, res, failure)
			if st.record && ps.origin != "corpus" && st.replay == nil {
				if err := appendCorpus(top, ps.seed, fmt.Sprintf("%s %s: %s", time.Now().UTC().Format("2006-01-02"), res.Strategy, firstLine(failure))); err != nil {
					report += fmt.Sprintf("\n(could not add the seed to the corpus: %v)", err)
				} else {
					report += fmt.Sprintf("\nthe seed was added to %s: commit it so it is replayed first from now on", corpusPath(top))
				}
			}
			t.Error(report)
		})
		if time.Since(lastProgress) > 10*time.Second {
			lastProgress = time.Now()
			t.Logf("windtunnel: %d/%d seeds, %d failures, %v wall", i+1, len(plan), sum.Failures, time.Since(start).Round(time.Millisecond))
		}
	}
	sum.Wall = time.Since(start)
	t.Logf("windtunnel: %s: %d seeds (%s), %d failed, %d steps, %v virtual in %v wall: %.0f seeds/s, %.0fx real time",
		sum.Test, sum.Seeds, sum.Strategy, sum.Failures, sum.Steps, sum.Virtual.Round(time.Millisecond),
		sum.Wall.Round(time.Millisecond), sum.SeedsPerSecond(), sum.Speedup())
	if sum.Failures > 0 {
		t.Logf("windtunnel: first failure at seed %d of %d (%s)", sum.FirstFailure, len(plan), sum.FirstFailingSeed)
	}
	if st.stats != "" {
		if err := appendStats(st.stats, sum); err != nil {
			t.Errorf("windtunnel: -sim.stats: %v", err)
		}
	}
	return sum
}

func planSeeds(test, top string, st settings) ([]plannedSeed, error) {
	if st.onlySeed != nil {
		return []plannedSeed{{*st.onlySeed, "flag"}}, nil
	}
	corpus, err := readCorpus(top)
	if err != nil {
		return nil, err
	}
	var plan []plannedSeed
	for _, s := range corpus {
		plan = append(plan, plannedSeed{s, "corpus"})
	}
	for i := range st.seeds {
		plan = append(plan, plannedSeed{SeedAt(test, i), fmt.Sprintf("seed %d of %d", i+1, st.seeds)})
	}
	return plan, nil
}

// calibrate measures the step count of one random-walk run, the k of PCT.
func calibrate(opts Options, seed uint64, st settings, body Body) int64 {
	cfg := opts.Config
	cfg.Seed = seed
	cfg.Strategy = sim.RandomWalk()
	cfg.StepDuration = max(cfg.StepDuration, st.stepTime)
	res := sim.Run(cfg, func(s *sim.Sim) { _ = body(s) })
	return max(res.Steps, 1)
}

// runOnce runs one seed and returns its result and failure text ("" if it
// passed). trace, if set, receives the full trace.
func runOnce(opts Options, seed uint64, st settings, pctSteps int64, body Body, trace *bytes.Buffer) (sim.Result, string) {
	cfg := opts.Config
	cfg.Seed = seed
	cfg.Strategy = st.strategyFor(max(pctSteps, 1))
	if st.stepTime > 0 {
		cfg.StepDuration = st.stepTime
	}
	if st.maxSteps > 0 {
		cfg.MaxSteps = st.maxSteps
	}
	if trace != nil {
		cfg.TraceOut = trace
		cfg.RecordDecisions = true
	}
	var bodyErr error
	res := sim.Run(cfg, func(s *sim.Sim) { bodyErr = body(s) })
	switch {
	case res.Err != nil:
		return res, res.Err.Error()
	case bodyErr != nil:
		return res, "check: " + bodyErr.Error()
	}
	return res, ""
}

func firstDifference(opts Options, seed uint64, st settings, pctSteps int64, body Body) string {
	var a, b bytes.Buffer
	runOnce(opts, seed, st, pctSteps, body, &a)
	runOnce(opts, seed, st, pctSteps, body, &b)
	la, lb := strings.Split(a.String(), "\n"), strings.Split(b.String(), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("first difference at trace line %d:\n  run 1: %s\n  run 2: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("traces differ in length: %d vs %d lines", len(la), len(lb))
}

func failureReport(t *testing.T, opts Options, ps plannedSeed, st settings, pctSteps int64, body Body, res sim.Result, failure string) string {
	var b strings.Builder
	rule := strings.Repeat("=", 78)
	fmt.Fprintf(&b, "\n%s\nwindtunnel failure\n", rule)
	fmt.Fprintf(&b, "test       %s\n", t.Name())
	fmt.Fprintf(&b, "seed       %#x (%s)\n", ps.seed, ps.origin)
	fmt.Fprintf(&b, "strategy   %s\n", res.Strategy)
	fmt.Fprintf(&b, "commit     %s (a replay needs the same commit)\n", commit())
	fmt.Fprintf(&b, "run        %d steps, %d tasks, %v virtual, trace hash %#016x\n", res.Steps, res.Tasks, res.Elapsed, res.Hash)
	for _, h := range res.Header {
		fmt.Fprintf(&b, "header     %s\n", h)
	}
	fmt.Fprintf(&b, "failure    %s\n", indent(failure, "           "))
	fmt.Fprintf(&b, "trace tail (last %d of %d events):\n", len(res.Tail), res.Events)
	for _, l := range res.Tail {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	dir, artErr := writeArtifacts(t, opts, ps.seed, st, pctSteps, body, res)
	if artErr != nil {
		fmt.Fprintf(&b, "artifacts  not written: %v\n", artErr)
	} else {
		fmt.Fprintf(&b, "artifacts  %s (trace.txt: every event; decisions.txt: the schedule)\n", dir)
	}
	pkg := packagePath()
	run := fmt.Sprintf("'^%s$'", strings.ReplaceAll(regexpQuote(t.Name()), "/", "$/^"))
	flags := fmt.Sprintf("-sim.seed=%#x -sim.strategy=%s", ps.seed, st.strategy)
	if st.strategy == "pct" {
		flags += fmt.Sprintf(" -sim.pct.depth=%d -sim.pct.steps=%d", st.pctDepth, pctSteps)
	}
	if st.stepTime > 0 {
		flags += fmt.Sprintf(" -sim.steptime=%v", st.stepTime)
	}
	if st.maxSteps > 0 {
		flags += fmt.Sprintf(" -sim.maxsteps=%d", st.maxSteps)
	}
	fmt.Fprintf(&b, "reproduce:\n  go test %s -run %s %s -v\n", pkg, run, flags)
	if artErr == nil {
		fmt.Fprintf(&b, "replay the recorded schedule:\n  go test %s -run %s -sim.seed=%#x -sim.replay=%s -v\n",
			pkg, run, ps.seed, filepath.Join(dir, "decisions.txt"))
	}
	b.WriteString(rule)
	return b.String()
}

// writeArtifacts re-runs the seed with the full trace on: the run is
// deterministic, so this costs one run and checks the hash on the way.
func writeArtifacts(t *testing.T, opts Options, seed uint64, st settings, pctSteps int64, body Body, res sim.Result) (string, error) {
	dir := filepath.Join(st.out, sanitize(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var trace bytes.Buffer
	again, _ := runOnce(opts, seed, st, pctSteps, body, &trace)
	if again.Hash != res.Hash {
		return "", fmt.Errorf("the re-run for artifacts diverged (hash %#x vs %#x): the run is not deterministic; rerun with -sim.determinism", again.Hash, res.Hash)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.txt"), trace.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := writeDecisions(filepath.Join(dir, "decisions.txt"), seed, again.Strategy, again.Decisions); err != nil {
		return "", err
	}
	return dir, nil
}

// ArtifactDir is where a test's artifacts for its current subtest go, for
// checkers that write their own (a porcupine visualization).
func ArtifactDir(t *testing.T) string {
	out := *flagOut
	if out == "" {
		out = os.TempDir() + "/windtunnel"
	}
	return filepath.Join(out, sanitize(t.Name()))
}

func appendStats(path string, sum Summary) error {
	line, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

// packagePath is the test's package relative to the module root ("./scenarios").
func packagePath() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|', ' ':
			return '_'
		}
		return r
	}, name)
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

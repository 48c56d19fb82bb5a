// Package simtest runs deterministic simulations as go test subtests.
//
// Each seed is a subtest named seed=0x…; seeds that once failed (the corpus
// under testdata/windtunnel) run first; a failing seed prints one block with
// the seed, strategy, run header, failure, trace tail, artifacts and one
// command that reproduces exactly that run.
//
// A body builds the world, runs the workload and returns what it measured
// together with nil, or an error naming the violated claim. The harness
// keeps exactly one result per seed, however often it runs the body for
// that seed (a PCT calibration run, the -sim.determinism re-run, the re-run
// that writes a failing seed's artifacts): runs of one seed are identical,
// so the first one's value is the seed's.
//
//	func TestLostUpdate(t *testing.T) {
//		res := simtest.Seeds(t, simtest.Options{Seeds: 200}, func(s *sim.Sim) (int, error) {
//			// build the world, run the workload, then check
//			return reads, nil // or an error naming the violated claim
//		})
//		for _, r := range res.Runs { ... r.Seed, r.Value, r.Failure ... }
//	}
//
// Run is the same for bodies that measure nothing. Prove explores every
// schedule of a small configuration instead of sampling seeds (see prove.go).
//
// Settings come from flags after go test's own (go test ./scenarios/oc
// -sim.seeds=1000) or, for any package pattern (go test ./...), from the
// environment: every flag -sim.x.y has the form WINDTUNNEL_SIM_X_Y. The
// flags are listed in settings.go and in docs/settings.md.
package simtest

import (
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// Options configures one simulation test.
type Options struct {
	// Seeds is the number of seeds go test runs by default; -sim.seeds
	// overrides it (make sim runs more).
	Seeds int
	// Config is the base configuration of every run: limits and step time.
	// The harness sets Seed, Strategy and the trace options.
	Config sim.Config
	// MaxSeeds caps the seeds whatever -sim.seeds says (0: no cap), for a
	// configuration so heavy that a sweep of many seeds would spend most of
	// its time there; the summary says when the cap applied.
	MaxSeeds int
	// Sequential runs the seeds one after another whatever -sim.parallel
	// says: for tests whose bodies measure wall time (DR-8, TW-9), which
	// seeds running on the other cores would distort.
	Sequential bool
}

// Body is the root task of one run that measures nothing: it builds the
// world, runs the workload, checks the outcome and returns nil, or an error
// naming the violated claim.
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

// SeedRun is one seed's outcome.
type SeedRun[R any] struct {
	Seed   uint64
	Origin string // "corpus", "flag", "replay" or "seed i of n"
	// Index is the regular seed's index among the test's seeds (SeedAt),
	// -1 for a corpus, flag or replay seed.
	Index int
	// Value is what the body returned for this seed (also when it failed:
	// a check that found a violation still reports what it measured). It is
	// the zero value when the run failed before the body returned (a panic,
	// a deadlock, a limit).
	Value R
	// Failure is "" for a passing seed, else the failure as reported.
	Failure string
	Steps   int64
	Virtual time.Duration
	// Probes counts the probes (sim.Sim.Probe) the seed's run reached.
	Probes map[string]int64
}

// Passed reports whether the seed passed.
func (r SeedRun[R]) Passed() bool { return r.Failure == "" }

// Results is every seed's outcome, one per seed in the order they ran, and
// the summary.
type Results[R any] struct {
	Summary
	Runs []SeedRun[R]

	h *harness // for Explain
}

// SeedAt returns the i-th regular seed of a test. Seeds are spread over the
// 64-bit space (splitmix64) and differ between tests, so two tests never
// explore the same schedules by accident. A seed is defined by (test, i):
// any slice of a test's seeds can be re-run alone.
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
	index  int // the regular seed's index (SeedAt), -1 for corpus, flag and replay seeds
}

// Run runs body once per seed as subtests of t and returns a summary. It
// fails t with a clear message on invalid settings.
func Run(t *testing.T, opts Options, body Body) Summary {
	t.Helper()
	return Seeds(t, opts, func(s *sim.Sim) (struct{}, error) { return struct{}{}, body(s) }).Summary
}

// Seeds runs body once per seed as subtests of t and returns one result per
// seed. It fails t with a clear message on invalid settings.
func Seeds[R any](t *testing.T, opts Options, body func(s *sim.Sim) (R, error)) Results[R] {
	t.Helper()
	h := &harness{t: t, opts: opts, top: strings.SplitN(t.Name(), "/", 2)[0]}
	h.body = func(s *sim.Sim) (any, error) { return body(s) }
	out := Results[R]{Summary: Summary{Test: t.Name()}, h: h}
	if !h.setup() {
		return out
	}
	out.Strategy = h.st.strategyFor(max(h.pctSteps, 1), h.surw).String()
	start := time.Now()
	lastProgress := start
	ahead := h.runAhead()
	defer ahead.stop()
	h.quiesce = ahead.pause
	for i, ps := range h.plan {
		if out.Failures > 0 && !h.st.keepGoing {
			break
		}
		var run SeedRun[R]
		pre := ahead.result(i)
		t.Run(fmt.Sprintf("seed=%#x", ps.seed), func(t *testing.T) {
			o := h.flySeed(t, ps, pre)
			run = SeedRun[R]{Seed: ps.seed, Origin: ps.origin, Index: ps.index, Failure: o.failure, Steps: o.res.Steps, Virtual: o.res.Elapsed, Probes: o.res.Probes}
			if v, ok := o.value.(R); ok {
				run.Value = v
			}
		})
		out.Runs = append(out.Runs, run)
		out.Seeds++
		out.Steps += run.Steps
		out.Virtual += run.Virtual
		if !run.Passed() {
			out.Failures++
			if out.FirstFailure == 0 {
				out.FirstFailure = i + 1
				out.FirstFailingSeed = fmt.Sprintf("%#x", ps.seed)
				out.FirstFailureMsg = firstLine(run.Failure)
			}
		}
		if time.Since(lastProgress) > 10*time.Second {
			lastProgress = time.Now()
			t.Logf("windtunnel: %d/%d seeds, %d failures, %v wall", i+1, len(h.plan), out.Failures, time.Since(start).Round(time.Millisecond))
		}
	}
	out.Wall = time.Since(start)
	h.finish(out.Summary, len(h.plan))
	return out
}

// harness is one simulation test in progress.
type harness struct {
	t        *testing.T
	opts     Options
	top      string // the top-level test's name: the corpus file's
	body     func(s *sim.Sim) (any, error)
	st       settings
	plan     []plannedSeed
	pctSteps int64
	surw     *sim.SURWProfile // SURW's estimates (profileSURW)
	// quiesce, if set, ends every run made ahead on other goroutines and
	// waits for them (before a shrink switches the fault under test off).
	quiesce func()
}

// setup validates the settings and plans the seeds; on error it fails the
// test and returns false.
func (h *harness) setup() bool {
	t := h.t
	st, err := currentSettingsCapped(h.opts.Seeds, h.opts.MaxSeeds)
	if err != nil {
		t.Fatalf("windtunnel: %v", err)
		return false
	}
	scanPackage(t, st)
	if st.capped {
		t.Logf("windtunnel: %d seeds, this test's cap (a heavy configuration), instead of -sim.seeds", st.seeds)
	}
	if st.replay != nil {
		if err := st.replay.belongsTo(t.Name()); err != nil {
			t.Fatalf("windtunnel: -sim.replay: %v", err)
			return false
		}
	}
	h.st = st
	h.plan, err = planSeeds(t.Name(), h.top, st)
	if err != nil {
		t.Fatalf("windtunnel: corpus: %v", err)
		return false
	}
	h.pctSteps = st.pctSteps
	if st.strategy == "pct" && h.pctSteps == 0 && st.replay == nil {
		h.pctSteps = h.calibrate(h.plan[0].seed)
	}
	if st.strategy == "surw" && st.replay == nil {
		h.surw = h.profileSURW()
	}
	return true
}

// outcome is one seed's first run (and, with -sim.determinism, its
// second).
type outcome struct {
	res     sim.Result
	value   any
	failure string
	again   *sim.Result
}

// flySeed runs one seed inside its subtest: the run itself, the optional
// trace, the determinism re-run, and on failure the report, the artifacts
// and the corpus entry.
//
// pre, when not nil, is the seed's run made ahead of time on another core
// (parallel.go). The run is deterministic, so it is the run this subtest
// would have made.
func (h *harness) flySeed(t *testing.T, ps plannedSeed, pre *outcome) outcome {
	st := h.st
	var trace *traceBuffer
	if st.trace != "" {
		trace = newTraceBuffer(maxTraceBytes)
	}
	var res sim.Result
	var value any
	var failure string
	if pre != nil && trace == nil {
		res, value, failure = pre.res, pre.value, pre.failure
	} else {
		res, value, failure = h.runOnce(ps.seed, trace)
	}
	if trace != nil {
		if err := notTheInput(st.trace); err != nil {
			t.Errorf("windtunnel: -sim.trace: %v", err)
		} else if err := os.WriteFile(st.trace, trace.Bytes(), 0o644); err != nil {
			t.Errorf("windtunnel: -sim.trace: %v", err)
		} else {
			t.Logf("windtunnel: trace of seed %#x (%d events, hash %#016x) written to %s", ps.seed, res.Events, res.Hash, st.trace)
		}
	}
	if failure == "" && st.twice(ps) {
		var again *sim.Result
		if pre != nil && trace == nil {
			again = pre.again
		}
		if again == nil {
			r, _, _ := h.runOnce(ps.seed, nil)
			again = &r
		}
		if again.Hash != res.Hash {
			failure = "determinism: the same seed ran twice with different traces\n" + h.firstDifference(ps.seed, res.Hash, again.Hash)
		}
	}
	o := outcome{res: res, value: value, failure: failure}
	if failure == "" {
		return o
	}
	report := h.failureReport(t, ps, res, failure)
	if st.shrink {
		report += h.shrinkSeed(t, ps, failure)
	}
	switch m := currentMutation(); {
	case m.mutated() && ps.origin != "corpus":
		// A seed that fails a mutant says nothing about the checkout's
		// code, and run first from the corpus it would change what the
		// next mutant run reports.
		report += fmt.Sprintf("\nthe seed was not added to the corpus: it failed %s, not the checkout's code", m)
	case st.record && ps.origin != "corpus" && st.replay == nil:
		if err := appendCorpus(h.top, ps.seed, fmt.Sprintf("%s %s: %s", time.Now().UTC().Format("2006-01-02"), res.Strategy, firstLine(failure))); err != nil {
			report += fmt.Sprintf("\n(could not add the seed to the corpus: %v)", err)
		} else {
			report += fmt.Sprintf("\nthe seed was added to %s: commit it so it is replayed first from now on", corpusPath(h.top))
		}
	}
	t.Error(report)
	return o
}

func (h *harness) finish(sum Summary, planned int) {
	t := h.t
	t.Logf("windtunnel: %s: %d seeds (%s), %d failed, %d steps, %v virtual in %v wall: %.0f seeds/s, %.0fx real time",
		sum.Test, sum.Seeds, sum.Strategy, sum.Failures, sum.Steps, sum.Virtual.Round(time.Millisecond),
		sum.Wall.Round(time.Millisecond), sum.SeedsPerSecond(), sum.Speedup())
	if sum.Failures > 0 {
		t.Logf("windtunnel: first failure at seed %d of %d (%s)", sum.FirstFailure, planned, sum.FirstFailingSeed)
	}
	if h.st.stats != "" {
		if err := appendStats(h.st.stats, sum); err != nil {
			t.Errorf("windtunnel: -sim.stats: %v", err)
		}
	}
}

func planSeeds(test, top string, st settings) ([]plannedSeed, error) {
	switch {
	case st.replay != nil:
		return []plannedSeed{{st.replay.Seed, "replay", -1}}, nil
	case st.onlySeed != nil:
		return []plannedSeed{{*st.onlySeed, "flag", -1}}, nil
	}
	var plan []plannedSeed
	// The corpus belongs to the first shard, so that the shards of a
	// sweep run every seed exactly once.
	corpus, err := readCorpus(top)
	if err != nil {
		return nil, err
	}
	inCorpus := map[uint64]bool{}
	for _, s := range corpus {
		if !inCorpus[s] && st.shard.index == 0 {
			plan = append(plan, plannedSeed{s, "corpus", -1})
		}
		inCorpus[s] = true
	}
	from, to := st.shard.slice(st.seeds)
	for i := from; i < to; i++ {
		// A regular seed the corpus runs is not run again, in any shard:
		// each seed runs and counts once.
		if seed := SeedAt(test, i); !inCorpus[seed] {
			plan = append(plan, plannedSeed{seed, fmt.Sprintf("seed %d of %d", i+1, st.seeds), i})
		}
	}
	return plan, nil
}

// config is the run configuration of one seed under the settings.
func (h *harness) config(seed uint64) sim.Config {
	cfg := h.opts.Config
	cfg.Seed = seed
	cfg.Strategy = h.st.strategyFor(max(h.pctSteps, 1), h.surw)
	cfg.HangAfter = h.st.hangAfter(cfg.HangAfter)
	if h.st.stepTime > 0 {
		cfg.StepDuration = h.st.stepTime
	}
	if h.st.maxSteps > 0 {
		cfg.MaxSteps = h.st.maxSteps
	}
	if rf := h.st.replay; rf != nil && rf.Choices != nil {
		o := protocol.ConfigOf(&cfg)
		o.ReplayChoices, o.Choices, o.Keeps = true, rf.Choices, rf.Keeps
	}
	return cfg
}

// profileSURW counts each task's selected events in one random-walk run,
// SURW's estimates. It runs the test's first regular seed whatever seeds
// the settings pick, so that -sim.seed=X reproduces a seed of the sweep.
func (h *harness) profileSURW() *sim.SURWProfile {
	cfg := h.config(SeedAt(h.t.Name(), 0))
	st, profile := sim.ProfileSURW()
	cfg.Strategy = st
	sim.Run(cfg, func(s *sim.Sim) { _, _ = h.body(s) })
	return profile()
}

// calibrate measures the step count of one random-walk run, the k of PCT.
func (h *harness) calibrate(seed uint64) int64 {
	cfg := h.config(seed)
	cfg.Strategy = sim.RandomWalk()
	res := sim.Run(cfg, func(s *sim.Sim) { _, _ = h.body(s) })
	return max(res.Steps, 1)
}

// runOnce runs one seed and returns its result, the body's value and the
// failure text ("" if it passed). trace, if set, receives the full trace.
func (h *harness) runOnce(seed uint64, trace *traceBuffer) (sim.Result, any, string) {
	cfg := h.config(seed)
	if trace != nil {
		cfg.TraceOut = trace
		cfg.RecordDecisions = true
	}
	return h.runConfig(cfg)
}

// runConfig runs the body once under cfg.
func (h *harness) runConfig(cfg sim.Config) (sim.Result, any, string) {
	var value any
	var bodyErr error
	res := sim.Run(cfg, func(s *sim.Sim) { value, bodyErr = h.body(s) })
	switch {
	case res.Err != nil:
		return res, value, res.Err.Error()
	case bodyErr != nil:
		return res, value, "check: " + bodyErr.Error()
	}
	return res, value, ""
}

// diffPairs bounds firstDifference's re-runs: pairs of runs with a full
// trace, each pair two more runs of the seed.
const diffPairs = 3

// firstDifference explains a determinism failure whose two runs had the
// trace hashes first and second. Only hashes were kept of those runs, so it
// re-runs the seed in pairs with a full trace (at most diffPairs) until a
// pair differs, and shows that pair's first difference. Nondeterminism need
// not recur (a race with another goroutine, a map order that came out the
// same): when every pair agreed, it says so instead of inventing a
// difference.
func (h *harness) firstDifference(seed, first, second uint64) string {
	for range diffPairs {
		a, b := newTraceBuffer(maxTraceBytes), newTraceBuffer(maxTraceBytes)
		ra, _, _ := h.runOnce(seed, a)
		rb, _, _ := h.runOnce(seed, b)
		if d := traceDifference(a.String(), b.String()); d != "" {
			return d
		}
		if ra.Hash != rb.Hash {
			// Both traces were cut (traceBuffer) and differ only in what was
			// left out: say so rather than that the difference did not recur.
			return fmt.Sprintf("trace hashes %#016x and %#016x differ, but only in the middle of the trace, which a kept trace of over %d bytes leaves out", ra.Hash, rb.Hash, maxTraceBytes)
		}
	}
	return fmt.Sprintf("trace hashes %#016x and %#016x; %d more pairs of runs with a full trace agreed with each other, so the difference did not recur", first, second, diffPairs)
}

// traceDifference is the first line where traces a (run 1) and b (run 2)
// differ, or "" when they are equal.
func traceDifference(a, b string) string {
	if a == b {
		return ""
	}
	la := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	lb := strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("first difference at trace line %d:\n  run 1: %s\n  run 2: %s", i+1, la[i], lb[i])
		}
	}
	if len(la) < len(lb) {
		return fmt.Sprintf("the trace of run 1 is the first %d of the %d lines of run 2's", len(la), len(lb))
	}
	return fmt.Sprintf("the trace of run 2 is the first %d of the %d lines of run 1's", len(lb), len(la))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

package simtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
)

// lostUpdate is two increments of a shared counter; with broken=true the
// lock is released between the read and the write (check-then-act).
func lostUpdate(s *sim.Sim, broken bool) error {
	mu := s.NewMutex("x")
	wg := s.NewWaitGroup("inc")
	x := 0
	for i := range 2 {
		wg.Add(1)
		s.Go(fmt.Sprint("inc", i), func() {
			defer wg.Done()
			mu.Lock()
			v := x
			if broken {
				mu.Unlock()
				mu.Lock()
			}
			x = v + 1
			mu.Unlock()
		})
	}
	_ = wg.Wait(context.Background())
	if x != 2 {
		return fmt.Errorf("lost update: x = %d after two increments", x)
	}
	return nil
}

// bodyCalls is atomic because the harness runs seeds ahead on parallel
// workers; the count, not the order, is what the parent test reads.
var bodyCalls atomic.Int64

// TestFixtureValues returns one value per seed; the parent test checks that
// the harness keeps exactly one per seed although -sim.determinism and the
// artifact re-run run the body more than once.
func TestFixtureValues(t *testing.T) {
	mode := fixture(t)
	res := Seeds(t, Options{Seeds: 7}, func(s *sim.Sim) (uint64, error) {
		bodyCalls.Add(1)
		if mode == "values-fail" && s.Seed() == SeedAt(t.Name(), 3) {
			return s.Seed() ^ 1, fmt.Errorf("the fourth seed fails on purpose")
		}
		return s.Seed() ^ 1, nil
	})
	ok := len(res.Runs) == res.Seeds
	for i, r := range res.Runs {
		ok = ok && r.Value == r.Seed^1 && r.Seed == SeedAt(t.Name(), i)
	}
	fmt.Printf("values: runs=%d seeds=%d failures=%d calls=%d consistent=%v\n", len(res.Runs), res.Seeds, res.Failures, bodyCalls.Load(), ok)
}

func TestSeedsKeepExactlyOneValuePerSeed(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureValues", "values", nil, "-sim.determinism", "-sim.record=false")
	require.NoError(t, err, out)
	assert.Contains(t, out, "values: runs=7 seeds=7 failures=0 calls=14 consistent=true", "determinism runs every body twice, one value is kept")

	// A sample: only the first 3 regular seeds run twice, on parallel
	// workers and sequentially alike.
	for _, par := range []string{"-sim.parallel=1", "-sim.parallel=3"} {
		out, err = childRun(t, dir, "TestFixtureValues", "values", nil, "-sim.determinism", "-sim.determinism.seeds=3", par, "-sim.record=false")
		require.NoError(t, err, out)
		assert.Contains(t, out, "values: runs=7 seeds=7 failures=0 calls=10 consistent=true", par)
	}
	out, err = childRun(t, dir, "TestFixtureValues", "values", nil, "-sim.determinism.seeds=-1")
	require.Error(t, err)
	assert.Contains(t, out, "-sim.determinism.seeds must not be negative, got -1")

	out, err = childRun(t, dir, "TestFixtureValues", "values-fail", nil, "-sim.keepgoing", "-sim.record=false", "-sim.out="+dir)
	require.Error(t, err)
	// 7 first runs, plus the failing seed's artifact re-run.
	assert.Contains(t, out, "values: runs=7 seeds=7 failures=1 calls=8 consistent=true", out)
}

func TestSettingsFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=3"})
	require.NoError(t, err, out)
	assert.Contains(t, out, "3 seeds (random), 0 failed")

	// A flag wins over the environment.
	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=3"}, "-sim.seeds=4")
	require.NoError(t, err, out)
	assert.Contains(t, out, "4 seeds (random), 0 failed")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.strategy") + "=bogus"})
	require.Error(t, err)
	assert.Contains(t, out, `WINDTUNNEL_SIM_STRATEGY: unknown strategy "bogus"`, "named as the user set it")
	assert.NotContains(t, out, `-sim.strategy: unknown`)
	assert.Equal(t, 1, strings.Count(out, "invalid simulation settings"), "reported once")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=many"})
	require.Error(t, err)
	assert.Contains(t, out, `WINDTUNNEL_SIM_SEEDS="many"`)
	assert.Equal(t, "WINDTUNNEL_SIM_PCT_DEPTH", EnvName("sim.pct.depth"))
}

// Every setting that shapes a run is in the replay file, so the printed
// replay command reproduces the failure whatever flags found it.
func TestReplayFileHoldsEverySettingThatShapesARun(t *testing.T) {
	for _, flags := range [][]string{
		{"-sim.steptime=1us"},
		{"-sim.strategy=pct", "-sim.pct.depth=2"},
		{"-sim.maxsteps=3"},
		{"-sim.steptime=3ms", "-sim.strategy=pct"},
		{"-sim.strategy=pos"},
		{"-sim.strategy=surw"},
		{"-sim.strategy=goorder"},
	} {
		t.Run(strings.Join(flags, "_"), func(t *testing.T) {
			dir := t.TempDir()
			f := printedFailure(t, dir, flags...)
			again, err := childRun(t, dir, "TestFixture", "fail", nil, "-sim.replay="+f.replay, "-sim.out="+dir+"/art2")
			require.Error(t, err)
			f.reproducedBy(t, again)
		})
	}
}

// failureBlock is what a failing fixture run printed: its trace hash, its
// failure line and the replay file it wrote.
type failureBlock struct{ hash, failure, replay string }

// printedFailure runs the failing fixture with flags and reads its block.
func printedFailure(t *testing.T, dir string, flags ...string) failureBlock {
	t.Helper()
	out, err := childRun(t, dir, "TestFixture", "fail", nil, append(flags, "-sim.record=false", "-sim.out="+dir+"/art")...)
	require.Error(t, err)
	hash := regexp.MustCompile(`trace hash (0x[0-9a-f]+)`).FindStringSubmatch(out)
	failure := regexp.MustCompile(`failure    (.*)`).FindStringSubmatch(out)
	replay := regexp.MustCompile(`-sim.replay=(\S+) -v`).FindStringSubmatch(out)
	require.NotNil(t, hash, out)
	require.NotNil(t, failure, out)
	require.NotNil(t, replay, out)
	return failureBlock{hash: hash[1], failure: failure[1], replay: replay[1]}
}

// reproducedBy says that a replay's output shows the same failure with the
// same trace hash, without diverging.
func (f failureBlock) reproducedBy(t *testing.T, out string) {
	t.Helper()
	assert.Contains(t, out, "trace hash "+f.hash, out)
	assert.Contains(t, out, "failure    "+f.failure)
	assert.NotContains(t, out, "diverged")
}

func TestReplayFilesAreRefusedWhenTheyBelongElsewhere(t *testing.T) {
	dir := t.TempDir()
	good := replayFile{Test: "TestFixture", Seed: 0x5eed, Strategy: "random", StepTime: time.Microsecond, Commit: "unknown", Decisions: []int32{0, 1, 1}}
	path := filepath.Join(dir, "r.txt")
	require.NoError(t, writeReplay(path, good))
	rf, err := readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, good.Decisions, rf.Decisions)
	assert.Equal(t, time.Microsecond, rf.StepTime)

	assert.ErrorContains(t, rf.belongsTo("TestOther"), "belongs to TestFixture seed 0x5eed, not to TestOther")
	st := settings{onlySeed: ptr(uint64(7))}
	assert.ErrorContains(t, st.adoptReplay(rf), "replays seed 0x5eed of TestFixture, not -sim.seed=0x7")
	other := *rf
	other.Commit = "000000000000"
	if headCommit() != "unknown" {
		assert.ErrorContains(t, (&settings{}).adoptReplay(&other), "recorded at commit 000000000000")
	}
	st = settings{}
	require.NoError(t, st.adoptReplay(rf))
	assert.Equal(t, time.Microsecond, st.stepTime, "the file's step time is applied")
	assert.False(t, st.record, "a replay never adds to the corpus")

	for name, c := range map[string]struct{ text, want string }{
		"v1":        {"windtunnel decisions v1 seed=0x1 strategy=random\n0 1\n", "old (v1) decision file"},
		"junk":      {"hello\n", "not a replay file"},
		"order":     {replayMagic + "\nseed 0x1\n", `want the "test" line`},
		"truncated": {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 3\n0 1\n", "announces 3 decisions, the file holds 2"},
		"extra":     {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 1\n0 1\n", "more than the 1 decisions"},
		"negative":  {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime -1s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 1\n0\n", "negative step time"},
		"bad id":    {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\ndecisions 1\n-3\n", "not a task id"},
		"bad seed":  {replayMagic + "\ntest T\npackage -\nseed zz\n", `header "seed"`},
		"empty":     {"", "not a replay file"},
	} {
		_, err := parseReplay([]byte(c.text))
		assert.ErrorContains(t, err, c.want, name)
	}
}

func ptr[T any](v T) *T { return &v }

func TestFixtureProof(t *testing.T) {
	mode := fixture(t)
	Prove(t, ProofOptions{MaxPreemptions: 2, Reduction: sim.ReductionDPOR}, func(s *sim.Sim) {
		if err := lostUpdate(s, mode == "prove-fail"); err != nil {
			s.Failf("%v", err)
		}
	})
}

func TestProofsWriteAReplayFileThatReproducesTheSchedule(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureProof", "prove-pass", nil)
	require.NoError(t, err, out)
	assert.Contains(t, out, "space exhausted")

	out, err = childRun(t, dir, "TestFixtureProof", "prove-fail", nil, "-sim.out="+dir)
	require.Error(t, err)
	assert.Contains(t, out, "windtunnel proof failure")
	replay := regexp.MustCompile(`-sim.replay=(\S+) -v`).FindStringSubmatch(out)
	require.NotNil(t, replay, out)
	again, err := childRun(t, dir, "TestFixtureProof", "prove-fail", nil, "-sim.replay="+replay[1])
	require.Error(t, err)
	assert.Contains(t, again, "lost update: x = 1")
	assert.Contains(t, again, "proof schedule replayed")

	// The same file on other code diverges, and says so.
	again, err = childRun(t, dir, "TestFixtureProof", "prove-pass", nil, "-sim.replay="+replay[1])
	require.Error(t, err)
	assert.Contains(t, again, "replay diverged")

	// -sim.determinism explores twice.
	out, err = childRun(t, dir, "TestFixtureProof", "prove-pass", nil, "-sim.determinism")
	require.NoError(t, err, out)
}

// childRun runs one fixture test of this package in a child process.
func childRun(t *testing.T, dir, test, mode string, env []string, args ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := newCommand(exe, append([]string{"-test.run=^" + test + "$", "-test.v"}, args...)...)
	cmd.Env = append(append(os.Environ(), "WINDTUNNEL_FIXTURE="+mode), env...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// TestFixtureParallel is a workload with a lost update on some seeds and
// per-seed values, run with different -sim.parallel settings by the test
// below.
func TestFixtureParallel(t *testing.T) {
	fixture(t)
	res := Seeds(t, Options{Seeds: 40}, func(s *sim.Sim) (int64, error) {
		err := lostUpdate(s, s.Seed()%7 == 0)
		return int64(s.Seed() % 1000), err
	})
	for _, r := range res.Runs {
		fmt.Printf("run %#x value=%d failed=%v\n", r.Seed, r.Value, !r.Passed())
	}
	fmt.Printf("summary seeds=%d failures=%d first=%d steps=%d\n", res.Seeds, res.Failures, res.FirstFailure, res.Steps)
}

// Parallel seeds give the output of a sequential run: the same subtests in
// the same order, the same values, failures and summary.
func TestParallelSeedsMatchSequential(t *testing.T) {
	keep := func(out string) string {
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "run ") || strings.HasPrefix(l, "summary ") || strings.HasPrefix(l, "=== RUN") || strings.Contains(l, "failure    ") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	for _, args := range [][]string{{"-sim.keepgoing"}, {}} {
		dir := t.TempDir()
		base := append([]string{"-sim.record=false", "-sim.out=" + dir}, args...)
		seq, _ := childRun(t, dir, "TestFixtureParallel", "parallel", nil, append(base, "-sim.parallel=1")...)
		par, _ := childRun(t, dir, "TestFixtureParallel", "parallel", nil, append(base, "-sim.parallel=4")...)
		require.Contains(t, seq, "summary seeds=")
		assert.Equal(t, keep(seq), keep(par), "args %v", args)
	}
}

// TestFixtureAbandon: the plan's first seed fails once the second has
// started beside it; the second starts its long loop only after the first
// has failed, and prints if it ran to its end, which it can then only do
// if nobody abandoned it. The order is forced by two flags, not left to
// the two workers' speeds (a loaded machine could otherwise let the second
// seed outrun the first). Every loop is bounded.
var abandonSecondStarted, abandonFirstFailed atomic.Bool

func TestFixtureAbandon(t *testing.T) {
	fixture(t)
	first, second := SeedAt(t.Name(), 0), SeedAt(t.Name(), 1)
	Seeds(t, Options{Seeds: 8}, func(s *sim.Sim) (int64, error) {
		// The waits spin outside the simulation (no step, no trace event),
		// so each seed's run stays the same whenever its flag comes: the
		// failing seed's re-run for its report matches its first run.
		wait := func(flag *atomic.Bool) {
			for i := 0; i < 100_000_000 && !flag.Load(); i++ {
				runtime.Gosched()
			}
		}
		switch s.Seed() {
		case first:
			wait(&abandonSecondStarted)
			abandonFirstFailed.Store(true)
			return 0, fmt.Errorf("the first seed fails")
		case second:
			abandonSecondStarted.Store(true)
			wait(&abandonFirstFailed)
		}
		for range 5_000_000 {
			s.Yield()
		}
		fmt.Printf("ran to its end: %#x\n", s.Seed())
		return 0, nil
	})
}

// Once a seed has failed, the seeds already running after it are abandoned
// (sim.Config.Abandon), not run to their end: the harness reports none of
// them, so their runs were only costs (a mutant's catching seed used to
// wait for a slow sibling seed to finish).
func TestSeedsAfterAFailureAreAbandoned(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureAbandon", "abandon", nil, "-sim.record=false", "-sim.out="+dir, "-sim.parallel=2")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "the first seed fails")
	assert.NotContains(t, out, "ran to its end", "the second seed, running beside the failing first, was run to its end")
}

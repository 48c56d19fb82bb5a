package simtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
)

// The fixtures below only run inside a child process started by the tests
// that follow (WINDTUNNEL_FIXTURE set): those tests check what the harness
// prints and does when a simulation fails.

func fixture(t *testing.T) string {
	mode := os.Getenv("WINDTUNNEL_FIXTURE")
	if mode == "" {
		t.Skip("fixture: run by TestHarness* in a child process")
	}
	return mode
}

// nondeterministic counts the runs of the fixture in its process, and
// each run yields that many times, so no two runs of a seed have the same
// trace: a bug on purpose. Seeds run side by side (-sim.parallel), so it is
// atomic: the fixture is nondeterministic, not racy (under -race, a plain
// counter failed this test once in 20 runs with a data race).
var nondeterministic atomic.Int64

func TestFixture(t *testing.T) {
	mode := fixture(t)
	Run(t, Options{Seeds: 300}, func(s *sim.Sim) error {
		mu := s.NewMutex("x")
		wg := s.NewWaitGroup("inc")
		x := 0
		for i := range 2 {
			wg.Add(1)
			s.Go(fmt.Sprint("inc", i), func() {
				defer wg.Done()
				mu.Lock()
				v := x
				if mode == "fail" {
					mu.Unlock() // check-then-act: the lock is released between read and write
					mu.Lock()
				}
				x = v + 1
				mu.Unlock()
			})
		}
		if mode == "nondeterministic" {
			for range nondeterministic.Add(1) {
				s.Yield()
			}
		}
		if mode == "once" && nondeterministic.Add(1) == 2 { // only the process's second run differs
			s.Yield()
		}
		_ = wg.Wait(context.Background())
		if x != 2 {
			return fmt.Errorf("lost update: x = %d after two increments", x)
		}
		return nil
	})
}

func child(t *testing.T, dir, mode string, args ...string) (string, error) {
	t.Helper()
	return childRun(t, dir, "TestFixture", mode, nil, args...)
}

var newCommand = exec.Command

func TestHarnessFailureBlockReproducesAndReplays(t *testing.T) {
	dir := t.TempDir()
	out, err := child(t, dir, "fail", "-sim.out="+dir+"/art", "-sim.record=false")
	require.Error(t, err, "a failing simulation fails the test")
	for _, want := range []string{
		"windtunnel failure", "strategy   random", "failure    check: lost update: x = 1",
		"trace tail (last", "artifacts  " + dir + "/art/TestFixture_seed=0x", "reproduce:", "replay the recorded run",
		"a replay needs the same commit",
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `windtunnel: first failure at seed \d+ of 300 \(0x`, out)
	seed := regexp.MustCompile(`seed       (0x[0-9a-f]+)`).FindStringSubmatch(out)
	require.NotNil(t, seed, out)
	hash := regexp.MustCompile(`trace hash (0x[0-9a-f]+)`).FindStringSubmatch(out)
	require.NotNil(t, hash)
	repro := regexp.MustCompile(`go test \S+ -run '(\S+)' (-sim.seed=\S+ -sim.strategy=random) -v`).FindStringSubmatch(out)
	require.NotNil(t, repro, out)

	// The printed command reproduces exactly that run: same failure, same hash.
	again, err := child(t, dir, "fail", "-sim.seed="+seed[1], "-sim.out="+dir+"/art2", "-sim.record=false")
	require.Error(t, err)
	assert.Contains(t, again, "trace hash "+hash[1])
	assert.Contains(t, again, "seed       "+seed[1]+" (flag)")

	// -sim.trace writes the whole trace of one run, pass or fail.
	traced, err := child(t, dir, "pass", "-sim.seed="+seed[1], "-sim.trace="+dir+"/trace.txt")
	require.NoError(t, err, traced)
	data, err := os.ReadFile(dir + "/trace.txt")
	require.NoError(t, err)
	assert.Contains(t, string(data), "spawn 1 inc0")
	assert.Contains(t, traced, "written to "+dir+"/trace.txt")

	// The recorded run replays to the same failure from the file alone.
	decisions := filepath.Join(dir, "art", "TestFixture_seed="+seed[1], "replay.txt")
	assert.Contains(t, out, "-sim.replay="+decisions+" -v")
	replayed, err := child(t, dir, "fail", "-sim.replay="+decisions, "-sim.out="+dir+"/art3")
	require.Error(t, err)
	assert.Contains(t, replayed, "failure    check: lost update: x = 1")
	assert.Contains(t, replayed, "trace hash "+hash[1])
	assert.Contains(t, replayed, "strategy   replay(")
}

// With -sim.artifacts=false a failure writes nothing and says so; its
// reproduce command still reproduces the run.
func TestHarnessWithoutArtifactsWritesNone(t *testing.T) {
	dir := t.TempDir()
	out, err := child(t, dir, "fail", "-sim.out="+dir+"/art", "-sim.record=false", "-sim.artifacts=false")
	require.Error(t, err, "a failing simulation fails the test")
	assert.Contains(t, out, "artifacts  not written (-sim.artifacts=false): the command below re-runs the seed")
	assert.NotContains(t, out, "replay the recorded run")
	assert.NoDirExists(t, dir+"/art", "no artifact directory")
	seed := regexp.MustCompile(`seed       (0x[0-9a-f]+)`).FindStringSubmatch(out)
	hash := regexp.MustCompile(`trace hash (0x[0-9a-f]+)`).FindStringSubmatch(out)
	require.NotNil(t, seed, out)
	require.NotNil(t, hash, out)
	require.Contains(t, out, "-sim.seed="+seed[1]+" -sim.strategy=random -v")
	again, err := child(t, dir, "fail", "-sim.seed="+seed[1], "-sim.record=false", "-sim.artifacts=false")
	require.Error(t, err)
	assert.Contains(t, again, "trace hash "+hash[1])
}

func TestHarnessCorpusIsRecordedAndReplayedFirst(t *testing.T) {
	dir := t.TempDir()
	out, err := child(t, dir, "fail", "-sim.out="+dir+"/art")
	require.Error(t, err)
	assert.Contains(t, out, "the seed was added to testdata/windtunnel/TestFixture.seeds")
	data, err := os.ReadFile(filepath.Join(dir, "testdata/windtunnel/TestFixture.seeds"))
	require.NoError(t, err)
	seed := strings.Fields(string(data))[0]

	// The correct program passes, and the corpus seed runs before the others.
	out, err = child(t, dir, "pass", "-sim.seeds=3")
	require.NoError(t, err, out)
	first := regexp.MustCompile(`=== RUN   TestFixture/seed=(0x[0-9a-f]+)`).FindStringSubmatch(out)
	require.NotNil(t, first, out)
	assert.Equal(t, seed, first[1])
	assert.Contains(t, out, "3 seeds (random), 0 failed", "the corpus seed is also the third regular seed: it runs once")
}

func TestHarnessDeterminismModeCatchesNondeterminism(t *testing.T) {
	dir := t.TempDir()
	out, err := child(t, dir, "nondeterministic", "-sim.determinism", "-sim.seeds=5", "-sim.record=false", "-sim.out="+dir)
	require.Error(t, err, out)
	assert.Contains(t, out, "determinism: the same seed ran twice with different traces")
	assert.Contains(t, out, "first difference at trace line")

	out, err = child(t, dir, "pass", "-sim.determinism", "-sim.seeds=20")
	require.NoError(t, err, out)

	// A difference that does not recur is reported as such: the re-runs
	// that look for it agree, and no difference is made up.
	out, err = child(t, dir, "once", "-sim.determinism", "-sim.seeds=1", "-sim.parallel=1", "-sim.record=false", "-sim.out="+dir)
	require.Error(t, err, out)
	assert.Contains(t, out, "determinism: the same seed ran twice with different traces")
	assert.Regexp(t, `trace hashes 0x[0-9a-f]{16} and 0x[0-9a-f]{16}; 3 more pairs of runs with a full trace agreed with each other, so the difference did not recur`, out)
}

func TestHarnessPCT(t *testing.T) {
	dir := t.TempDir()
	out, err := child(t, dir, "fail", "-sim.strategy=pct", "-sim.pct.depth=2", "-sim.record=false", "-sim.out="+dir)
	require.Error(t, err, out)
	assert.Regexp(t, `strategy   pct\(depth=2,steps=\d+\)`, out)
	assert.Regexp(t, `-sim.strategy=pct -sim.pct.depth=2 -sim.pct.steps=\d+ -v`, out)
}

// POS, SURW and GoOrder are named in the report and the command, and the command's
// -sim.seed run is the very run that failed: SURW's profile comes from the
// test's first regular seed whichever seeds a run picks.
func TestHarnessPOSSURWAndGoOrder(t *testing.T) {
	for _, name := range []string{"pos", "surw", "goorder"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := printedFailure(t, dir, "-sim.strategy="+name)
			out, err := child(t, dir, "fail", "-sim.strategy="+name, "-sim.record=false", "-sim.out="+dir)
			require.Error(t, err, out)
			assert.Contains(t, out, "strategy   "+name+"\n")
			seed := regexp.MustCompile(`-sim.strategy=` + name + ` -sim.seed=(0x[0-9a-f]+)|-sim.seed=(0x[0-9a-f]+) -sim.strategy=` + name).FindStringSubmatch(out)
			require.NotNil(t, seed, out)
			again, err := child(t, dir, "fail", "-sim.strategy="+name, "-sim.seed="+seed[1]+seed[2], "-sim.record=false", "-sim.out="+dir+"/again")
			require.Error(t, err, again)
			f.reproducedBy(t, again)
		})
	}
}

func TestHarnessRejectsBadFlags(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.txt"), []byte("hello\n1 2 3\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-sim.strategy=bogus"}, `-sim.strategy: unknown strategy "bogus"`},
		{[]string{"-sim.seed=zz"}, `invalid value "zz" for flag -sim.seed`},
		{[]string{"-sim.seeds=-1"}, "-sim.seeds must be positive"},
		{[]string{"-sim.pct.depth=0"}, "-sim.pct.depth must be at least 1"},
		{[]string{"-sim.maxsteps=-5"}, "-sim.maxsteps must be positive"},
		{[]string{"-sim.shrink.more=-2"}, "-sim.shrink.more must not be negative, got -2"},
		{[]string{"-sim.replay=" + dir + "/missing.txt"}, "-sim.replay: cannot read replay file"},
		{[]string{"-sim.replay=" + dir + "/junk.txt"}, "not a replay file"},
		{[]string{"-sim.trace=" + dir + "/t.txt"}, "-sim.trace needs -sim.seed or -sim.replay"},
	} {
		out, err := child(t, dir, "pass", c.args...)
		assert.Error(t, err, "%v", c.args)
		assert.Contains(t, out, c.want, "%v", c.args)
		assert.NotContains(t, out, "panic:", "%v", c.args)
	}
}

func TestSeedsAreStableAndSpread(t *testing.T) {
	assert.Equal(t, SeedAt("TestA", 0), SeedAt("TestA", 0))
	assert.NotEqual(t, SeedAt("TestA", 0), SeedAt("TestB", 0))
	assert.NotEqual(t, SeedAt("TestA", 0), SeedAt("TestA", 1))
	v, err := ParseSeed("0x5EED")
	require.NoError(t, err)
	assert.Equal(t, uint64(0x5eed), v)
	v, err = ParseSeed("42")
	require.NoError(t, err)
	assert.Equal(t, uint64(42), v)
	_, err = ParseSeed("0x")
	assert.Error(t, err)
}

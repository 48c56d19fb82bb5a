package audit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// failfastMutant breaks the failfast fixture: its TestCaught's first
// subtest then fails.
func failfastMutant() mutants.Mutant {
	return mutants.Mutant{ID: "fixture-broken", Claims: []string{"X-1"}, What: "the fixture is broken",
		File: "scenarios/audit/testdata/failfast/fixture.go", Old: "Broken = false", New: "Broken = true",
		Tests: "^Test", Pkg: "./scenarios/audit/testdata/failfast", Kind: mutants.KindCatalogue}
}

// TestMutantRunsStopAtTheirFirstFailure: a mutant is caught by its first
// failure, and both ways of running one (its own overlay, the family's
// schema binary) start no test or subtest after it: the fixture's "large"
// configuration and its later test leave no mark. Without -failfast the
// audit's mutant phase spent most of its time in the 400,000-points-per-key
// configurations of DR-2 and DR-10 after their 4,000-point ones had caught
// the mutant.
func TestMutantRunsStopAtTheirFirstFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	m := failfastMutant()
	root, bin := buildFixture(t, m.Pkg)
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}

	for _, way := range []struct {
		name string
		run  func() MutantResult
	}{
		{"overlay", func() MutantResult { return r.RunMutant(context.Background(), m, 1) }},
		{"schema", func() MutantResult { return r.runSchemaMutant(context.Background(), m, 1, bin) }},
	} {
		t.Run(way.name, func(t *testing.T) {
			marks := t.TempDir()
			t.Setenv("FAILFAST_MARKS", marks)
			res := way.run()
			require.Empty(t, res.Error)
			assert.True(t, res.Caught, "the small configuration catches it")
			assert.FileExists(t, filepath.Join(marks, "small"))
			assert.NoFileExists(t, filepath.Join(marks, "large"), "no subtest starts after the first failure")
			assert.NoFileExists(t, filepath.Join(marks, "later"), "no test starts after the first failure")
		})
	}

	// And the fixture is a fair one: unmutated, everything runs.
	marks := t.TempDir()
	cmd := exec.Command(bin, "-test.failfast")
	cmd.Dir = filepath.Join(root, m.Pkg)
	cmd.Env = append(os.Environ(), "FAILFAST_MARKS="+marks)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, name := range []string{"small", "large", "later"} {
		assert.FileExists(t, filepath.Join(marks, name))
	}
}

// buildFixture builds the test binary of a fixture package (a path from
// the repository's root) and returns the root and the binary.
// TestAnInterruptedMutantIsNoCatch: a mutant whose checks the user
// interrupts (Ctrl-C: the run's context ends) has no verdict. Its killed
// process exits with an error like a check's failure, which must not be
// read as the mutant caught.
func TestAnInterruptedMutantIsNoCatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	m := failfastMutant()
	m.Tests = "^TestSlow$"
	root, bin := buildFixture(t, m.Pkg)
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}
	t.Setenv("FAILFAST_SLOW", "1")
	for _, way := range []struct {
		name string
		run  func(ctx context.Context) MutantResult
	}{
		{"overlay", func(ctx context.Context) MutantResult { return r.RunMutant(ctx, m, 2) }},
		{"schema", func(ctx context.Context) MutantResult { return r.runSchemaMutant(ctx, m, 2, bin) }},
	} {
		t.Run(way.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			res := way.run(ctx)
			assert.False(t, res.Caught, "an interrupted run caught nothing")
			assert.Contains(t, res.Error, "interrupted")
		})
	}
}

func buildFixture(t *testing.T, pkg string) (root, bin string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin = filepath.Join(t.TempDir(), filepath.Base(pkg)+".test")
	build := exec.Command("go", "test", "-c", "-o", bin, pkg)
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return root, bin
}

// TestAFailingTestThatIsNoClaimCheckIsAProblem: a claim check's failure is
// its claim violated (judged there); the failure of any other test of the
// claim phase, or of a package, is a problem of its own. Without it a
// failing helper test of a family package would pass the audit, and make
// test no longer runs the family packages outside the audit.
func TestAFailingTestThatIsNoClaimCheckIsAProblem(t *testing.T) {
	got := Merge(sample[:1], []findings.Record{{ID: "OC-1", Test: "TestOC1_Union/perKey=4", Verdict: findings.Holds, Value: 0.5}})
	rep := &Report{Claims: got, FailedTests: []string{"mod/oc TestOC1_Union", "mod/oc TestHelperTables", "mod/ms: does not build"}}
	Judge(rep)
	assert.Equal(t, []string{
		"mod/oc TestHelperTables failed and is not a claim check (see claims/output.txt)",
		"claim phase: mod/ms: does not build (see claims/output.txt)",
	}, rep.Problems)
}

// TestTheClaimPhaseChecksDeterminismWhenAsked: with CheckDeterminism the
// claim phase runs its sample twice and a check whose runs differ fails (the
// fixture drifts from one run to the next); without it the same fixture
// passes, as nothing runs twice.
func TestTheClaimPhaseChecksDeterminismWhenAsked(t *testing.T) {
	t.Parallel() // its own processes and directories: beside the others, not after them
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	for _, n := range []int{0, 2} {
		r := Runner{Root: root, Out: t.TempDir(), Bin: prebuiltFixtures(t), Pkgs: []string{"./scenarios/audit/testdata/determinism"}, Log: io.Discard, Timeout: 5 * time.Minute}
		r.CheckDeterminism(n)
		_, failed, err := r.RunClaims(context.Background(), "^TestDrifts$", 0)
		require.Error(t, err, "the fixture writes no claim records")
		out, readErr := os.ReadFile(filepath.Join(r.Out, "claims", "output.txt"))
		require.NoError(t, readErr)
		if n == 0 {
			assert.Empty(t, failed, "%s", out)
			continue
		}
		assert.Equal(t, []string{"github.com/windtunnel/windtunnel/scenarios/audit/testdata/determinism TestDrifts"}, failed, "%s", out)
		assert.Contains(t, string(out), "determinism: the same seed ran twice with different traces")
	}
}

// TestAMutantRunsOneSeedAtATime: a mutant is caught by its first failing
// seed, so the seeds -sim.parallel would run ahead of it beside it are
// work thrown away on cores the audit's other processes use. The fixture
// counts the seed runs that started: one under the audit, and more than
// one when the same binary runs on its own with four cores (the fixture
// can tell).
func TestAMutantRunsOneSeedAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	const pkg = "./scenarios/audit/testdata/ahead"
	root, bin := buildFixture(t, pkg)
	t.Setenv("GOMAXPROCS", "4")

	runs := filepath.Join(t.TempDir(), "runs")
	t.Setenv("AHEAD_RUNS", runs)
	m := mutants.Mutant{ID: "fixture-ahead", Claims: []string{"X-1"}, What: "every seed fails", Tests: "^TestSeeds$", Pkg: pkg, Kind: mutants.KindCatalogue}
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}
	res := r.runSchemaMutant(context.Background(), m, 8, bin)
	require.Empty(t, res.Error)
	require.True(t, res.Caught)
	assert.Equal(t, 1, res.SeedsToCatch)
	got, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(got), "seed runs started under the audit")

	// The fixture is a fair one: on its own, seeds run ahead.
	cmd := exec.Command(bin, "-test.run=^TestSeeds$", "-test.failfast", "-sim.record=false", "-sim.artifacts=false", "-sim.out="+t.TempDir())
	cmd.Dir = filepath.Join(root, pkg)
	cmd.Env = append(os.Environ(), "WINDTUNNEL_MUTANT=fixture-ahead")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	got, err = os.ReadFile(runs)
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(got)))
	require.NoError(t, err)
	assert.Greater(t, n, 1, "seed runs started by the binary on its own with 4 cores")
}

// TestRaceMutantsRunAtEveryRaceCPU: a Race mutant's checks run under the
// race detector at one processor and then two (mutants.RaceCPUs), and
// make race runs the RaceFree checks the same way. A check that catches
// its mutant only when the machine lends it two idle cores gives a verdict
// that depends on the load.
func TestRaceMutantsRunAtEveryRaceCPU(t *testing.T) {
	m := failfastMutant()
	plain := overlayTestArgs(m, "/o.json")
	assert.NotContains(t, plain, "-race")
	assert.Contains(t, plain, "-failfast")
	require.True(t, strings.HasPrefix(mutants.RaceCPUs, "1,"), "one processor first: %q", mutants.RaceCPUs)
	for _, cpu := range strings.Split(mutants.RaceCPUs, ",") {
		args := strings.Join(raceRunArgs(m, cpu, time.Minute), " ")
		assert.Contains(t, args, "-test.cpu="+cpu+" ")
		assert.Contains(t, args, "-test.count=1 ", "one run per process")
	}

	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	var racefree []string
	for _, line := range strings.Split(string(makefile), "\n") {
		if strings.Contains(line, "-run 'RaceFree'") {
			racefree = append(racefree, line)
		}
	}
	require.Len(t, racefree, 1, "make race's command for the RaceFree checks")
	assert.Contains(t, racefree[0], "-race -count=1 -cpu "+mutants.RaceCPUs+" ")
}

// TestRaceRunsCountsEveryRun: each run of a Race mutant's checks is
// counted as it ends, by its process's exit, whatever the runs printed
// (here a run that prints a mark of its own, which counts for nothing).
func TestRaceRunsCountsEveryRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	bin := filepath.Join(dir, "race.test")
	// Every second run fails, as a run that makes the race does; each
	// ends as a test binary does with -test.v=test2json.
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '"+raceRunMark+" 9 at -cpu 9: caught'\n"+
		"n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs\n"+
		"if [ $((n % 2)) = 0 ]; then printf '\\026PASS\\n'; else printf '\\026FAIL\\n'; exit 1; fi\n"), 0o755))
	r := Runner{Root: dir, Timeout: time.Minute}
	run := &testRun{}
	m := mutants.Mutant{ID: "m", Pkg: "./p", Tests: "^TestX_RaceFree$", Race: true}
	require.Error(t, r.raceRuns(context.Background(), bin, m, run, map[string]string{}))
	run.finish()
	runs := mutants.RaceRuns * len(strings.Split(mutants.RaceCPUs, ","))
	assert.Equal(t, (runs+1)/2, run.raceCaught)
	assert.Equal(t, runs/2, run.raceMissed)
	assert.Equal(t, runs, run.packages, "every run is a process and a package result of its own")
}

// racyMutant drops the racy fixture's lock.
func racyMutant() mutants.Mutant {
	return mutants.Mutant{ID: "fixture-racy", Claims: []string{"X-1"}, What: "the counter without its lock",
		File: "scenarios/audit/testdata/racy/racy.go", Old: "\tc.mu.Lock()\n\tc.n++\n\tc.mu.Unlock()", New: "\tc.n++",
		Tests: "^TestX1_RealGoroutinesRaceFree$", Pkg: "./scenarios/audit/testdata/racy", Kind: mutants.KindCatalogue, Race: true}
}

// TestRaceMutantRunsAreCountedOneProcessEach: a Race mutant's checks run
// mutants.RaceRuns times at each of mutants.RaceCPUs. Each run is a
// process of its own: the detector reports a race once per process, so a
// second run in one process would pass. Every run is counted: a check that
// misses the race on some runs is a problem, not a catch.
func TestRaceMutantRunsAreCountedOneProcessEach(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a race-detector test binary")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}
	runs := mutants.RaceRuns * len(strings.Split(mutants.RaceCPUs, ","))

	res := r.RunMutant(context.Background(), racyMutant(), 1)
	require.Empty(t, res.Error)
	assert.True(t, res.Caught)
	assert.Equal(t, runs, res.RaceRunsCaught, "every run is a process of its own and makes the race")
	assert.Zero(t, res.RaceRunsMissed)
	assert.Equal(t, "TestX1_RealGoroutinesRaceFree (a data race the race detector reported: see output.txt)", res.CaughtBy)

	// Every second run makes no race: those runs are counted as missed,
	// and the audit names the mutant a problem.
	t.Setenv("RACY_RUNS", t.TempDir())
	res = r.RunMutant(context.Background(), racyMutant(), 1)
	require.Empty(t, res.Error)
	assert.True(t, res.Caught)
	assert.Equal(t, runs/2, res.RaceRunsCaught)
	assert.Equal(t, runs/2, res.RaceRunsMissed)
	rep := &Report{Mutants: []MutantResult{res}}
	Judge(rep)
	require.NotEmpty(t, rep.Problems)
	assert.Contains(t, rep.Problems[len(rep.Problems)-1], fmt.Sprintf("fixture-racy (X-1) survived %d of its %d race-detector runs", runs/2, runs))

	// The race schema's build counts the same runs (RACY_RUNS: every
	// second run makes no race).
	dir := t.TempDir()
	rsc, err := mutants.BuildRaceSchema(root, dir, []mutants.Mutant{racyMutant()})
	require.NoError(t, err)
	require.True(t, rsc.In["fixture-racy"])
	bins, failed := r.buildTests(context.Background(), dir, []string{racyMutant().Pkg}, rsc.Overlay, 1, "-race")
	require.Empty(t, failed)
	t.Setenv("RACY_RUNS", t.TempDir())
	viaSchema := r.runRaceSchemaMutant(context.Background(), racyMutant(), 1, bins[racyMutant().Pkg])
	require.Empty(t, viaSchema.Error)
	assert.True(t, viaSchema.Schema)
	assert.Equal(t, runs/2, viaSchema.RaceRunsCaught)
	assert.Equal(t, runs/2, viaSchema.RaceRunsMissed)

	// And the fixture is a fair one: with its lock, the detector finds nothing.
	cmd := exec.Command("go", "test", "-race", "-count=1", "-cpu", mutants.RaceCPUs, "./scenarios/audit/testdata/racy")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestMutantsAreScreenedOnOneSeedFirst: a mutant's checks fly one seed each
// first, judged only on what that seed breaks (findings.ScreenEnv). A mutant
// the first seed catches is caught there, without the seeds of the checks
// before the catching one (fixture-first: TestEarly flies 1 seed, not 10).
// One that takes more seeds passes the screen. The full run then catches
// it at the same seed as without the screen (fixture-late: its third). The
// fixture's TestEarly needs a probe one seed does not reach: the screen must
// not count that against the mutant (unscreened, one seed fails it alone).
func TestMutantsAreScreenedOnOneSeedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	const pkg = "./scenarios/audit/testdata/screen"
	root, bin := buildFixture(t, pkg)
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}
	mutant := func(id string) mutants.Mutant {
		return mutants.Mutant{ID: id, Claims: []string{"X-1"}, What: id, Tests: "^Test(Early|Late)$", Pkg: pkg, Kind: mutants.KindCatalogue}
	}
	run := func(t *testing.T, id string) (MutantResult, string) {
		flies := filepath.Join(t.TempDir(), "flies")
		t.Setenv("SCREEN_FLIES", flies)
		res := r.runSchemaMutant(context.Background(), mutant(id), 10, bin)
		require.Empty(t, res.Error)
		got, err := os.ReadFile(flies)
		require.NoError(t, err)
		return res, string(got)
	}

	t.Run("caught by the screen", func(t *testing.T) {
		res, flies := run(t, "fixture-first")
		assert.True(t, res.Caught)
		assert.True(t, res.Screened)
		assert.Equal(t, 1, res.SeedsToCatch)
		assert.Equal(t, 10, res.SeedBudget, "the budget it would have had")
		assert.Contains(t, res.CaughtBy, "TestLate")
		assert.Equal(t, "TestEarly 1\nTestLate 1\n", flies)
	})
	t.Run("caught by the full run after the screen", func(t *testing.T) {
		res, flies := run(t, "fixture-late")
		assert.True(t, res.Caught)
		assert.False(t, res.Screened)
		assert.Equal(t, 3, res.SeedsToCatch)
		assert.Contains(t, res.CaughtBy, "TestEarly")
		assert.Equal(t, "TestEarly 1\nTestLate 1\nTestEarly 3\n", flies, "the screen, then the full run up to the catch")
	})
	t.Run("caught by a subtest's verdict over its seeds", func(t *testing.T) {
		m := mutant("fixture-verdict")
		m.Tests = "^TestSub$"
		res := r.runSchemaMutant(context.Background(), m, 10, bin)
		require.Empty(t, res.Error)
		assert.True(t, res.Caught)
		assert.False(t, res.Screened, "one seed cannot fail a rate over the seeds")
		assert.Equal(t, 10, res.SeedsToCatch)
		assert.Equal(t, "TestSub/perKey=4 (its verdict over all 10 seeds)", res.CaughtBy)
	})
	t.Run("survives both", func(t *testing.T) {
		res, flies := run(t, "fixture-none")
		assert.False(t, res.Caught)
		assert.Equal(t, 10, res.SeedBudget)
		assert.Equal(t, "TestEarly 1\nTestLate 1\nTestEarly 10\nTestLate 10\n", flies)
	})

	// The fixture is a fair one: at one seed, unscreened and judged as the
	// audit judges (its records go to a claims file), its probe fails
	// TestEarly with no mutant at all.
	cmd := exec.Command(bin, "-test.run=^TestEarly$", "-sim.seeds=1", "-sim.record=false", "-sim.out="+t.TempDir())
	cmd.Dir = filepath.Join(root, pkg)
	cmd.Env = append(os.Environ(), "WINDTUNNEL_CLAIMS="+filepath.Join(t.TempDir(), "claims.jsonl"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "fewer than 1")
}

// A long mutant phase says how long it has left once ten mutants have
// ended, from their mean.
func TestTimeLeftEstimatesFromTheMean(t *testing.T) {
	assert.Equal(t, "", timeLeft(time.Minute, 9, 100), "too few to say")
	assert.Equal(t, "", timeLeft(time.Hour, 100, 100), "nothing left")
	assert.Equal(t, ", about 1h30m0s left", timeLeft(10*time.Minute, 10, 100))
}

package simtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/faultswitch"
)

// fixtureFault is the fault TestFixtureControl plants: the seventh
// increment counts twice. A child run with WINDTUNNEL_FIXTURE_FAULT=1
// registers it with faultswitch at start-up, as a schema build's mutant
// switch does; without it the binary carries no switchable fault.
var fixtureFault = true

func init() {
	if os.Getenv("WINDTUNNEL_FIXTURE_FAULT") == "1" {
		faultswitch.Register(func(on bool) { fixtureFault = on })
	}
}

// TestFixtureControl is ten scripted increments whose check predicts the
// counter from the script: every seed fails with the fault, and a run
// with any increment dropped fails on any code. Run by
// TestAShrinkKeepsOnlyRunsThatPassWithoutTheFault in a child process.
func TestFixtureControl(t *testing.T) {
	fixture(t)
	Run(t, Options{Seeds: 16}, func(s *sim.Sim) error {
		counter := 0
		for i := range 10 {
			if !s.Keep(sim.KeepOperation) {
				continue
			}
			op := s.OpBegin("increment %d", i)
			counter++
			if fixtureFault && i == 6 {
				counter++
			}
			s.OpEnd(op, "ok")
		}
		if counter != 10 {
			return fmt.Errorf("X-1: counter %d after the script's 10 increments", counter)
		}
		return nil
	})
}

// With a switchable fault in the binary, the shrink keeps only runs the
// code without it passes: nothing can be dropped here, and the report and
// shrink.json say the result was checked and how many runs were refused.
// Without one, the same failure "shrinks" to no operation at all, a run
// that fails on any code.
func TestAShrinkKeepsOnlyRunsThatPassWithoutTheFault(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureControl", "control", []string{"WINDTUNNEL_FIXTURE_FAULT=1"},
		"-sim.out="+dir+"/art", "-sim.record=false", "-sim.shrink", "-sim.parallel=4")
	require.Error(t, err, "the seed still fails")
	assert.Contains(t, out, "shrunk     operations 10 -> 10,")
	assert.Contains(t, out, "and passes without the fault under test (")
	sums, _ := filepath.Glob(filepath.Join(dir, "art", "*", "shrunk", "shrink.json"))
	require.Len(t, sums, 1, out)
	data, err := os.ReadFile(sums[0])
	require.NoError(t, err)
	var sum ShrinkSummary
	require.NoError(t, json.Unmarshal(data, &sum))
	assert.True(t, sum.Controlled)
	assert.Positive(t, sum.Refused, "every smaller run failed without the fault too")

	plain, err := childRun(t, dir, "TestFixtureControl", "control", nil, "-sim.out="+dir+"/art2", "-sim.record=false", "-sim.shrink")
	require.Error(t, err)
	assert.Contains(t, plain, "shrunk     operations 10 -> 0,", "without a control the script's prediction fails once anything is dropped")
	assert.NotContains(t, plain, "passes without the fault under test")
}

// pause ends the runs made ahead on other goroutines before it returns (a
// shrink's control runs then switch the fault with no other run in
// flight). It keeps the runs that had finished, and hands the others back
// to their subtests (result nil) instead of waiting for them.
func TestPauseEndsTheRunsAheadAndKeepsTheFinishedOnes(t *testing.T) {
	h := &harness{t: t, opts: Options{Seeds: 3}, top: t.Name()}
	require.True(t, h.setup())
	h.st.parallel = 3
	first := h.plan[0].seed
	var spinning atomic.Int32
	h.body = func(s *sim.Sim) (any, error) {
		if s.Seed() == first {
			return "done", nil
		}
		spinning.Add(1)
		for range 1 << 30 { // until abandoned: a run ahead that has not finished
			s.Yield()
		}
		return "ran to its end", nil
	}
	a := h.runAhead()
	for deadline := time.Now().Add(time.Minute); spinning.Load() < 2; {
		require.True(t, time.Now().Before(deadline), "the two later seeds never started")
		time.Sleep(time.Millisecond)
	}
	require.NotNil(t, a.result(0))
	a.pause()
	assert.Equal(t, "done", a.result(0).value, "a finished run is kept")
	assert.Nil(t, a.result(1), "an abandoned run is handed back to its subtest")
	assert.Nil(t, a.result(2))
	a.stop() // after pause: nothing left to stop
}

// TestFixtureGuided stands for a mutant and the code without it: without
// WINDTUNNEL_FIXTURE_CONTROL it fails every seed after two tasks yielded
// in turn; with it, a third task runs first (other steps, other task
// ids) and the run passes. Run by TestAGuidedReplayFollowsTheScheduleWhereItFits.
func TestFixtureGuided(t *testing.T) {
	fixture(t)
	control := os.Getenv("WINDTUNNEL_FIXTURE_CONTROL") == "1"
	Run(t, Options{Seeds: 1}, func(s *sim.Sim) error {
		wg := s.NewWaitGroup("tasks")
		names := []string{"a", "b"}
		if control {
			names = append([]string{"extra"}, names...)
		}
		for _, name := range names {
			wg.Add(1)
			s.Go(name, func() {
				defer wg.Done()
				for range 5 {
					s.Yield()
				}
			})
		}
		_ = wg.Wait(context.Background())
		if !control {
			return errors.New("X-3: the fault")
		}
		return nil
	})
}

// A replay file run against other code. Strictly, it fails at the first
// step the file did not record. Guided (-sim.replay.guided), it follows the
// schedule where it fits and runs to its own end, which is how the audit
// checks a shrunk counterexample on the code without its mutant when the
// mutant has a build of its own. Guided without a replay file is refused.
func TestAGuidedReplayFollowsTheScheduleWhereItFits(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureGuided", "guided", nil, "-sim.out="+dir+"/art", "-sim.record=false")
	require.Error(t, err)
	files, _ := filepath.Glob(filepath.Join(dir, "art", "*", "replay.txt"))
	require.Len(t, files, 1, out)
	control := []string{"WINDTUNNEL_FIXTURE_CONTROL=1"}

	strict, err := childRun(t, dir, "TestFixtureGuided", "guided", control, "-sim.replay="+files[0])
	require.Error(t, err, "the other code takes steps the file did not record")
	assert.Contains(t, strict, "replay diverged")

	guided, err := childRun(t, dir, "TestFixtureGuided", "guided", control, "-sim.replay="+files[0], "-sim.replay.guided")
	require.NoError(t, err, guided)
	assert.Contains(t, guided, "--- PASS: TestFixtureGuided/seed=")

	bad, err := childRun(t, dir, "TestFixtureGuided", "guided", control, "-sim.replay.guided")
	require.Error(t, err)
	assert.Contains(t, bad, "-sim.replay.guided needs -sim.replay")
}

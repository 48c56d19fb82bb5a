package shrink_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// counterWorld is ten scripted increments of a counter, one operation
// each; with the fault on, the seventh counts twice. fromScript makes the
// check compare the counter with the script's ten increments: a prediction
// made before the run, as a check that expects every scripted operation
// does. Otherwise the check compares it with the increments actually made.
func counterWorld(fault *bool, fromScript bool) func(*sim.Sim) {
	return func(s *sim.Sim) {
		counter, made := 0, 0
		for i := range 10 {
			if !s.Keep(sim.KeepOperation) {
				continue
			}
			op := s.OpBegin("increment %d", i)
			counter++
			if *fault && i == 6 {
				counter++
			}
			made++
			s.OpEnd(op, "ok")
		}
		want := made
		if fromScript {
			want = 10
		}
		if counter != want {
			s.Failf("check: X-1: counter %d after %d increments", counter, want)
		}
	}
}

// control runs body with the fault switched off, as faultswitch.Without
// does for a schema build.
func control(fault *bool, body func(*sim.Sim)) shrink.Runner {
	return func(cfg sim.Config) (sim.Result, string) {
		*fault = false
		defer func() { *fault = true }()
		return runner(body)(cfg)
	}
}

// Without a control, a check that predicts from the whole script "shrinks"
// to a run with no operation at all: the prediction fails once the edit
// drops any, on any code. That is the trap the control closes.
func TestWithoutAControlAPredictionFromTheScriptShrinksToNothing(t *testing.T) {
	fault := true
	body := counterWorld(&fault, true)
	cfg, failure := firstFailing(t, body)
	out, err := shrink.Shrink(runner(body), cfg, failure, shrink.Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(0), out.After.Operations, "dropping every increment fails the script's prediction")
	assert.False(t, out.Controlled)
	fault = false
	res := sim.Run(replaying(sim.Config{Seed: cfg.Seed, Strategy: sim.Replay(out.Decisions)}, out), body)
	require.Error(t, res.Err, "the code without the fault fails the shrunk run too: it is no counterexample of the fault")
}

// With a control, every smaller run that the code without the fault fails
// too is refused: nothing can be dropped from a check that expects every
// scripted operation, and the result says how many were refused.
func TestAControlRefusesRunsThatFailWithoutTheFault(t *testing.T) {
	fault := true
	body := counterWorld(&fault, true)
	cfg, failure := firstFailing(t, body)
	out, err := shrink.Shrink(runner(body), cfg, failure, shrink.Options{Control: control(&fault, body)})
	require.NoError(t, err)
	assert.True(t, fault, "the fault is on again after the shrink")
	assert.True(t, out.Controlled)
	assert.Equal(t, int64(10), out.After.Operations, "every increment is needed for the code without the fault to pass")
	assert.Positive(t, out.Refused, "the smaller runs failed without the fault too")
	assert.GreaterOrEqual(t, out.ControlRuns, out.Refused+1, "the starting run is checked too")
	assert.GreaterOrEqual(t, out.Attempts, out.ControlRuns, "control runs are re-runs")
}

// A check that predicts from what was done lets the control accept the
// fault's own minimal run: the one increment that counts twice.
func TestAControlKeepsTheFaultsOwnMinimalRun(t *testing.T) {
	fault := true
	body := counterWorld(&fault, false)
	cfg, failure := firstFailing(t, body)
	out, err := shrink.Shrink(runner(body), cfg, failure, shrink.Options{Control: control(&fault, body)})
	require.NoError(t, err)
	assert.True(t, out.Controlled)
	assert.Equal(t, int64(1), out.After.Operations, "the seventh increment alone")
	assert.Zero(t, out.Refused, "no smaller failing run fails without the fault")
	fault = false
	res := sim.Run(replaying(sim.Config{Seed: cfg.Seed, Strategy: protocol.Guided(out.Decisions).(sim.Strategy)}, out), body)
	require.NoError(t, res.Err, "the code without the fault passes the shrunk run")
}

// A run that the code without the fault fails as well cannot be shrunk
// into a counterexample of the fault: the shrink says so instead.
func TestAControlThatFailsTheStartingRunEndsTheShrink(t *testing.T) {
	fault := true
	body := counterWorld(&fault, true)
	cfg, failure := firstFailing(t, body)
	always := func(cfg sim.Config) (sim.Result, string) {
		return sim.Result{}, "check: X-1: counter 11 after 10 increments"
	}
	_, err := shrink.Shrink(runner(body), cfg, failure, shrink.Options{Control: always})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fails without the fault under test too")
}

// stopWorld is ten scripted operations whose end check expects all ten
// (a directed construction that needs its workload); with the fault on,
// the run fails at the sixth, before asking for it.
func stopWorld(fault *bool) func(*sim.Sim) {
	return func(s *sim.Sim) {
		made := 0
		for i := range 10 {
			if *fault && i == 5 {
				s.Failf("check: X-2: the fault ended the run at operation %d", i)
			}
			if !s.Keep(sim.KeepOperation) {
				continue
			}
			op := s.OpBegin("step %d", i)
			made++
			s.OpEnd(op, "ok")
		}
		if made != 10 {
			s.Failf("check: X-2: %d of the 10 operations made", made)
		}
	}
}

// The code without the fault goes on past where the failing run ended. In
// the run's own world every later operation is dropped, and the end check
// fails on any code. The control then tries the world the seed would have
// gone on with, which that code passes. So the starting run is a
// counterexample, and the operations it made stay (each is needed).
func TestAControlGoesOnAsTheSeedWouldPastTheRunsEnd(t *testing.T) {
	fault := true
	body := stopWorld(&fault)
	cfg, failure := firstFailing(t, body)
	out, err := shrink.Shrink(runner(body), cfg, failure, shrink.Options{Control: control(&fault, body)})
	require.NoError(t, err, "the seed's world past the run's end passes without the fault")
	assert.True(t, out.Controlled)
	assert.Equal(t, int64(5), out.After.Operations, "dropping any of the five fails the end check without the fault too")
	assert.Positive(t, out.Refused)
}

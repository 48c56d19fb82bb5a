package netthreads

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A scripted run on two threads agrees with Predict connection by
// connection (visits summed per thread, timeouts exactly), its probes see
// the metrics at their instant, and OnProbe can end the run.
func TestScriptMatchesPredict(t *testing.T) {
	cop := inactivitycop.DefaultConfig()
	cop.Buckets = 8
	conns := []ScriptConn{
		{Thread: 0, Ops: []checks.CopOp{{At: ms(500), Kind: checks.OpSetInactivity, D: ms(5500)}, {At: ms(3500), Kind: checks.OpActivity}}},
		{Thread: 0, Ops: []checks.CopOp{{At: ms(500), Kind: checks.OpSetActive, D: 20 * time.Second}}}, // wraps the 8 s ring twice
		{Thread: 1, Ops: []checks.CopOp{{At: ms(1500), Kind: checks.OpSetInactivity, D: ms(2000)}, {At: ms(2400), Kind: checks.OpClose}}},
		{Thread: 1, Ops: []checks.CopOp{{At: ms(1500), Kind: checks.OpSetInactivity, D: ms(2200)}, {At: ms(1500), Kind: checks.OpSetActive, D: ms(2300)}}},
	}
	end := 30*time.Second + ms(500)
	var res []ThreadResult
	var err error
	cfg := twSim
	cfg.Seed = 1
	r := sim.Run(cfg, func(s *sim.Sim) {
		res, err = Script{Cop: cop, Threads: 2, Conns: conns, End: end, Probes: []time.Duration{ms(4500)}}.Run(s)
	})
	require.NoError(t, r.Err)
	require.NoError(t, err)
	for th := range 2 {
		var visits int
		var fired []checks.TimeoutEvent
		for i, c := range conns {
			if c.Thread != th {
				continue
			}
			p, err := checks.PredictCop(8, time.Second, c.Ops, end)
			require.NoError(t, err)
			visits += p.Visits
			for _, f := range p.Fired {
				f.Conn = uint64(i + 1)
				fired = append(fired, f)
			}
		}
		assert.Equal(t, int64(visits), res[th].Visited, "thread %d", th)
		assert.ElementsMatch(t, fired, res[th].Fired, "thread %d", th)
		assert.Equal(t, int64(31), res[th].Passes)
		assert.Equal(t, res[th].RefPasses, res[th].Passes)
		require.Len(t, res[th].Probes, 1)
		assert.Equal(t, int64(5), res[th].Probes[0].Passes, "passes at 0..4 s")
	}
	assert.Equal(t, 2, res[1].FiredAt[4*time.Second], "both timeouts of conn 4 in the pass at 4 s")
	full := cop
	full.MaxConns = 1
	r = sim.Run(cfg, func(s *sim.Sim) {
		_, err = Script{Cop: full, Threads: 2, Conns: conns, End: end}.Run(s)
	})
	require.NoError(t, r.Err)
	assert.ErrorContains(t, err, "queue of 1 connections is full", "a script's connections must fit its queue")

	stop := errors.New("enough")
	r = sim.Run(cfg, func(s *sim.Sim) {
		res, err = Script{Cop: cop, Threads: 2, Conns: conns, End: end, Probes: []time.Duration{ms(4500)},
			OnProbe: func(int, Probe) error { return stop }}.Run(s)
		if s.Elapsed() != ms(4500) {
			s.Failf("the run went on to %v", s.Elapsed())
		}
	})
	require.NoError(t, r.Err)
	assert.ErrorIs(t, err, stop)
}

func TestScriptRejects(t *testing.T) {
	cop := inactivitycop.DefaultConfig()
	ok := []ScriptConn{{Ops: []checks.CopOp{{At: ms(500), Kind: checks.OpActivity}}}}
	for name, sc := range map[string]Script{ //windtunnel:unordered independent cases
		"no thread":     {Cop: cop, Conns: ok, End: ms(2500)},
		"end on a tick": {Cop: cop, Threads: 1, Conns: ok, End: 2 * time.Second},
		"op on a tick":  {Cop: cop, Threads: 1, Conns: []ScriptConn{{Ops: []checks.CopOp{{At: time.Second, Kind: checks.OpActivity}}}}, End: ms(2500)},
		"op after end":  {Cop: cop, Threads: 1, Conns: []ScriptConn{{Ops: []checks.CopOp{{At: ms(3500), Kind: checks.OpActivity}}}}, End: ms(2500)},
		"bad thread":    {Cop: cop, Threads: 1, Conns: []ScriptConn{{Thread: 1, Ops: ok[0].Ops}}, End: ms(2500)},
		"probe on tick": {Cop: cop, Threads: 1, Conns: ok, End: ms(2500), Probes: []time.Duration{time.Second}},
	} {
		cfg := twSim
		cfg.Seed = 1
		var err error
		r := sim.Run(cfg, func(s *sim.Sim) { _, err = sc.Run(s) })
		require.NoError(t, r.Err, name)
		assert.Error(t, err, name)
	}
}

// Applied is the script as it ran: an operation a shrinker drops is not in
// it, and the cop behaves as the prediction from Applied says, so a check
// that predicts from it fails only for the code's sake.
func TestAppliedLeavesOutTheDroppedOperations(t *testing.T) {
	cop := inactivitycop.DefaultConfig()
	cop.Buckets = 8
	conns := []ScriptConn{
		{Thread: 0, Ops: []checks.CopOp{{At: ms(500), Kind: checks.OpSetInactivity, D: ms(5500)}, {At: ms(3500), Kind: checks.OpActivity}}},
		{Thread: 0, Ops: []checks.CopOp{{At: ms(1500), Kind: checks.OpSetInactivity, D: ms(2000)}}},
	}
	end := 12*time.Second + ms(500)
	var res []ThreadResult
	body := func(s *sim.Sim) {
		var err error
		res, err = Script{Cop: cop, Threads: 1, Conns: conns, End: end}.Run(s)
		if err != nil {
			s.Failf("%v", err)
		}
	}
	cfg := twSim
	cfg.Seed = 1
	rec := sim.Run(simtest.RecordChoices(cfg), body)
	require.NoError(t, rec.Err)
	assert.Equal(t, conns, res[0].Applied, "nothing dropped: the script as written")

	// The activity (the third operation, in time order) dropped.
	r := sim.Run(simtest.ReplayChoices(cfg, rec, simtest.KeyedKeepsOf(rec).Without(sim.KeepOperation, 2)), body)
	require.NoError(t, r.Err)
	applied := res[0].Applied
	assert.Equal(t, []checks.CopOp{conns[0].Ops[0]}, applied[0].Ops, "the activity is not in the script as it ran")
	assert.Equal(t, conns[1].Ops, applied[1].Ops)
	var visits int
	for _, c := range applied {
		p, err := checks.PredictCop(8, time.Second, c.Ops, end)
		require.NoError(t, err)
		visits += p.Visits
	}
	assert.Equal(t, int64(visits), res[0].Visited, "the cop visits as the applied script predicts")
}

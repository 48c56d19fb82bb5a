package netthreads

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A recorded world shows the connection operations, the pauses it injects,
// and, on the operation after which a check found it, the first violation
// of a claim.
func TestARecordedWorldShowsItsOperationsAndBlamesTheFirstViolation(t *testing.T) {
	cfg := twSim
	cfg.Seed, cfg.Record = 1, true
	res := sim.Run(cfg, func(s *sim.Sim) {
		w, err := New(s, quietConfig())
		if err != nil {
			s.Failf("%v", err)
		}
		th := w.Threads[0]
		th.start(context.Background())
		w.sleepUntil(context.Background(), 500*time.Millisecond)
		i := th.openConn()
		th.setInactivity(i, 10*time.Second)
		th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) { _ = Lose(cop, th.conns[i]) })
		th.activity(i) // its check finds the lost connection: TW-1
		th.activity(i) // and again: not blamed twice
		th.stop()
	})
	require.NoError(t, res.Err)
	var begins, ends int
	var blamed []record.Event
	for _, e := range res.Record.Events {
		switch e.Kind {
		case record.EventOpBegin:
			begins++
		case record.EventOpEnd:
			ends++
		}
		if e.Blame != "" {
			blamed = append(blamed, e)
		}
	}
	assert.Equal(t, 4, begins, "open, set-inactivity, two activities")
	assert.Equal(t, begins, ends)
	require.Len(t, blamed, 1)
	assert.Equal(t, record.EventOpEnd, blamed[0].Kind)
	assert.True(t, strings.HasPrefix(blamed[0].Blame, "TW-1: thread 0 conn 1: live deadline"), blamed[0].Blame)
}

func TestPausesAndOperationsCanBeDropped(t *testing.T) {
	body := func(s *sim.Sim) {
		c := Swarm(s.Rand())
		c.Threads = c.Threads[:1]
		c.Conns, c.Workers, c.Ops = 40, 1, 30
		c.SetPauses(s.Rand(), []time.Duration{20 * time.Second, 30 * time.Second}, []bool{false, true})
		w, err := New(s, c)
		if err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
		if err := w.Err(); err != nil {
			s.Failf("%v", err)
		}
	}
	cfg := twSim
	cfg.Seed, cfg.Record = 2, true
	rec := sim.Run(simtest.RecordChoices(cfg), body)
	require.NoError(t, rec.Err)
	faults := 0
	for _, e := range rec.Record.Events {
		if e.Kind == record.EventFault {
			faults++
		}
	}
	assert.Equal(t, 2, faults, "two pauses injected")
	keeps := simtest.KeepsOf(rec)
	require.Len(t, keeps.Faults, 2)

	// The first pause dropped: the cops run through it.
	replay := func(k simtest.Keeps) sim.Result {
		return sim.Run(simtest.ReplayChoices(sim.Config{Seed: 2, MaxVirtual: cfg.MaxVirtual}, rec, k), body)
	}
	r := replay(keeps.Without(sim.KeepFault, 0))
	require.NoError(t, r.Err, "the world stays consistent without the pause")
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Faults, int64(1))
	assert.Less(t, simtest.ChoicesOf(&r).Kept.Faults, simtest.ChoicesOf(&rec).Kept.Faults)

	// The first few operations dropped: neither cop sees them.
	r = replay(keeps.Without(sim.KeepOperation, 0, 1, 2, 3, 4))
	require.NoError(t, r.Err, "the world stays consistent without those operations")
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Operations, int64(1))
}

// A dropped open moves none of its task's later draws or Keep answers:
// the opener draws each connection's arming before it asks Keep, and an
// open and its arming are one operation. Dropped, the first open leaves
// every later connection of the opener armed as before (shifted by one
// connection number), which is what lets a shrink drop the opens before the
// one its failure is about.
func TestADroppedOpenMovesNoLaterDraw(t *testing.T) {
	body := func(s *sim.Sim) {
		c := Swarm(s.Rand())
		c.Threads = c.Threads[:1]
		c.Conns, c.Workers, c.Ops = 40, 0, 0
		c.SetPauses(s.Rand(), nil, nil)
		w, err := New(s, c)
		if err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
	}
	// armings lists the opener's set-active and set-inactivity operations
	// in order, without their connection numbers.
	connNumber := regexp.MustCompile(`conn \d+ `)
	armings := func(r sim.Result) []string {
		var out []string
		for _, e := range r.Record.Events {
			if e.Kind == record.EventOpBegin && strings.Contains(e.Text, " set-") {
				out = append(out, connNumber.ReplaceAllString(e.Text, "conn N "))
			}
		}
		return out
	}
	cfg := twSim
	cfg.Seed, cfg.Record = 3, true
	rec := sim.Run(simtest.RecordChoices(cfg), body)
	require.NoError(t, rec.Err)
	keeps := simtest.KeyedKeepsOf(rec)
	opener := 0
	for _, k := range simtest.ChoicesOf(&rec).KeepSites {
		if k.Key.Task == "net-0/opener" {
			opener++
		}
	}
	require.Equal(t, 40, opener, "one Keep per open: the arming asks none of its own")
	require.Equal(t, "net-0/opener", simtest.ChoicesOf(&rec).KeepSites[0].Key.Task, "the first operation is the first open")

	r := sim.Run(simtest.ReplayChoices(cfg, rec, keeps.Without(sim.KeepOperation, 0)), body)
	require.NoError(t, r.Err)
	assert.EqualValues(t, 1, simtest.ChoicesOf(&r).Dropped.Operations)
	all, less := armings(rec), armings(r)
	require.NotEmpty(t, all)
	first := len(all) - len(less) // the dropped open's one or two armings
	require.True(t, first == 1 || first == 2, "the dropped open had %d armings", first)
	assert.Equal(t, all[first:], less, "every later connection is armed as before")
}

package drain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// recordedWorld runs testWorld's plan with a flush worker whose every third
// cycle fails, and, when broken is set, corrupts the first drain's output
// before the check, which must then blame that drain.
func recordedWorld(cfg sim.Config, broken bool) (sim.Result, *World) {
	var w *World
	res := sim.Run(cfg, func(s *sim.Sim) {
		var err error
		w, err = New(s, Config{Keys: testKeys, Inspect: true})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Run(Plan{Preload: 1_200, Recorders: 2, RecordsEach: 20, RecorderKeys: [][]string{{"a", "b"}, {"c", "d"}},
			Drainers: 1, DrainsEach: 2, DrainDelay: 10, SnapshotAfterDrain: true, Prunes: 1, Queries: 6,
			Pause: 5 * time.Millisecond,
			Hook:  HookPlan{Records: true, Key: "q", Wait: true, Query: true, Prune: true},
			Worker: &WorkerPlan{Period: 5 * time.Millisecond, Fail: func(n int) string {
				if n%3 == 0 {
					return "error"
				}
				return ""
			}},
			FinalDrain: true})
		if broken {
			for i, op := range w.Ops {
				if isDrain(op) {
					w.Ops[i].Out.Points = op.Out.Points[1:]
					break
				}
			}
		}
		Check(w, lim)
	})
	return res, w
}

func TestARecordedRunShowsTheOperationsAndWhatBrokeAClaim(t *testing.T) {
	res, w := recordedWorld(sim.Config{Seed: 2, Record: true}, true)
	require.NoError(t, res.Err)
	require.NotNil(t, res.Record)
	k := map[record.EventKind]int{}
	for _, e := range res.Record.Events {
		k[e.Kind]++
	}
	assert.Equal(t, len(w.Ops), k[record.EventOpBegin])
	assert.Equal(t, len(w.Ops), k[record.EventOpEnd])
	assert.Equal(t, int64(len(w.Ops)), res.Operations)
	for _, op := range w.Ops {
		e := res.Record.Events[w.Event(op.ID)]
		require.Equal(t, record.EventOpEnd, e.Kind)
		assert.True(t, strings.HasPrefix(e.Text, fmt.Sprintf("#%d %s: ", op.ID, op.Task)), "%q", e.Text)
	}
	assert.Positive(t, k[record.EventFault], "the failing flush cycles")
	assert.Equal(t, simtest.ChoicesOf(&res).Kept.Faults, int64(k[record.EventFault]))

	var blamed []record.Event
	for _, e := range res.Record.Events {
		if e.Blame != "" {
			blamed = append(blamed, e)
		}
	}
	require.NotEmpty(t, blamed)
	assert.True(t, strings.HasPrefix(blamed[0].Blame, "DR-1: #"), blamed[0].Blame)
	assert.Contains(t, blamed[0].Text, "drain(")

	// The record changes nothing.
	plain, _ := recordedWorld(sim.Config{Seed: 2}, true)
	assert.Equal(t, plain.Hash, res.Hash)
}

func TestDroppedDrainOperationsAndFlushFailures(t *testing.T) {
	rec, w := recordedWorld(simtest.RecordChoices(sim.Config{Seed: 2}), false)
	require.NoError(t, rec.Err)
	// Keyed by task, as a shrink replays (KeepsOfRun): the drain yields'
	// operations ask Keep too, and how many there are moves with the
	// schedule, which would shift every later answer of an ordinal list.
	keeps := simtest.KeyedKeepsOf(rec)
	require.NotEmpty(t, keeps.Faults)
	all := len(w.Ops)

	r, w2 := recordedWorld(simtest.RecordChoices(simtest.ReplayChoices(sim.Config{Seed: 2}, rec, keeps.Without(sim.KeepOperation, 0, 1, 2))), false)
	require.NoError(t, r.Err, "a world without those operations is still consistent")
	// The three dropped, by ordinal, and besides them only operations the
	// recorded run never asked about: the hooks of drain yields that came
	// to be (a keyed replay answers a new key with a drop). A keyed
	// replay records only what it kept, so: the three are not among its
	// sites, every kept call is, and it counts at least the three dropped.
	named := map[any]bool{} // by KeepKey
	for _, k := range simtest.ChoicesOf(&rec).KeepSites[:3] {
		require.Equal(t, sim.KeepOperation, k.What)
		named[k.Key] = true
	}
	for _, k := range simtest.ChoicesOf(&r).KeepSites {
		assert.True(t, k.Kept, "a keyed replay recorded the dropped call %v", k.Key)
		assert.False(t, named[k.Key], "operation %v was to be dropped", k.Key)
	}
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Operations, int64(3))
	assert.EqualValues(t, len(simtest.ChoicesOf(&r).KeepSites), simtest.ChoicesOf(&r).Kept.Operations+simtest.ChoicesOf(&r).Kept.Faults, "every kept call is recorded")
	// A yield whose records were dropped says so and counts none issued
	// or completed; a yield that issued records completed its two (the
	// final drain's yields issue none: its hook plan is empty).
	hook := -1
	for i, k := range simtest.ChoicesOf(&rec).KeepSites {
		if strings.HasPrefix(k.Key.Task, "hook-recorder-") {
			hook = i
			break
		}
	}
	require.GreaterOrEqual(t, hook, 0, "a yield's records ask Keep")
	r, w3 := recordedWorld(simtest.ReplayChoices(sim.Config{Seed: 2}, rec, keeps.Without(sim.KeepOperation, hook)), false)
	require.NoError(t, r.Err)
	yieldsDropped := 0
	for _, h := range w3.Hooks {
		switch {
		case h.Dropped:
			yieldsDropped++
			assert.Zero(t, h.Injected+h.Completed, "yield %d", h.N)
		case h.Injected > 0:
			assert.Equal(t, [2]int{2, 2}, [2]int{h.Injected, h.Completed}, "yield %d", h.N)
		}
	}
	assert.Equal(t, 1, yieldsDropped, "the one yield whose records were dropped")
	for _, h := range w.Hooks {
		assert.False(t, h.Dropped, "a seed's run drops nothing")
	}
	assert.Positive(t, len(w2.Ops))
	_ = all // the operations issued at drain yields depend on the schedule, not on the list
	assert.NoError(t, Check(w2, lim).Err())

	r, _ = recordedWorld(simtest.ReplayChoices(sim.Config{Seed: 2}, rec, keeps.NoFaults()), false)
	require.NoError(t, r.Err)
	assert.Positive(t, simtest.ChoicesOf(&r).Dropped.Faults)
	assert.Zero(t, simtest.ChoicesOf(&r).Kept.Faults, "Keep lists by kind: every fault dropped is none injected")
}

func TestOpNamed(t *testing.T) {
	id, ok := opNamed("#12 drainer-0: drain(< x) -> 3 points [writes 1..2]: its buckets differ")
	assert.True(t, ok)
	assert.Equal(t, 12, id)
	for _, msg := range []string{"at drain yield 3, ...", "#x y", "#12"} {
		_, ok := opNamed(msg)
		assert.False(t, ok, msg)
	}
}

package simdb_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// faultyWorld is one client over a faulty database and a faulty bus: each
// round it reads, then writes and publishes the new value to two
// subscribers. Both operations ask sim.Keep first, as a workload must. With
// one client the world's draws come in program order, and a dropped fault
// draws no more than the fault would have, so an edited choice list stays
// aligned with the run: zeroing every fault's Keep drops exactly those.
type faultyWorld struct {
	db       *simdb.DB[counter]
	bus      *simbus.Bus[int]
	received int
}

const faultyRounds = 30

func (fw *faultyWorld) run(s *sim.Sim) {
	reads := 0
	db := newDB(s, simdb.Config{
		Statements: []string{"read"}, PoolSize: 1,
		Latency:       simdb.Latency{BaseMin: ms(1), BaseMax: ms(5), SlowProb: 0.3, SlowMin: ms(100), SlowMax: ms(300)},
		ReadErrorProb: 0.3, WriteErrorProb: 0.3,
		// Every fifth read takes exactly 50 ms: a fault override.
		Hook: func(st simdb.Statement) simdb.Fault {
			if st.Write {
				return simdb.Fault{}
			}
			if reads++; reads%5 == 0 {
				return simdb.Fault{Fixed: true, Latency: ms(50)}
			}
			return simdb.Fault{}
		},
	})
	bus, err := simbus.New[int](s, simbus.Config{Faults: simbus.Faults{
		LossProb: 0.3, DupProb: 0.3, ReorderProb: 0.3, ReorderMin: ms(10), ReorderMax: ms(50),
		Delay: simbus.Delay{Min: ms(1), Max: ms(5), TailProb: 0.3, TailMin: ms(100), TailMax: ms(200)},
	}})
	if err != nil {
		s.Failf("simbus.New: %v", err)
	}
	fw.db, fw.bus = db, bus
	for _, name := range []string{"sub-a", "sub-b"} {
		if _, err := bus.Subscribe(name, func(int) { fw.received++ }); err != nil {
			s.Failf("subscribe: %v", err)
		}
	}
	for range faultyRounds {
		if s.Keep(sim.KeepOperation) {
			op := s.OpBegin("read")
			c, err := db.Acquire(bg)
			if err != nil {
				s.Failf("acquire: %v", err)
			}
			n, err := read(bg, s, c)
			c.Release()
			s.OpEnd(op, "%d, %v", n, err)
		}
		if s.Keep(sim.KeepOperation) {
			op := s.OpBegin("increment")
			// The publish does not depend on the write's outcome: a
			// dropped write error must not add the publish's draws.
			_, werr := db.Write(bg, "inc", inc)
			perr := bus.Publish(bg, "client", db.State().n)
			s.OpEnd(op, "%v, %v", werr, perr)
		}
	}
	_ = s.Sleep(bg, time.Second) // every delivery lands
}

func kinds(r *record.Record) map[record.EventKind]int {
	out := map[record.EventKind]int{}
	for _, e := range r.Events {
		out[e.Kind]++
	}
	return out
}

func TestARecordedRunShowsOperationsStatementsMessagesAndFaults(t *testing.T) {
	var fw faultyWorld
	res := sim.Run(sim.Config{Seed: 4, Record: true}, fw.run)
	require.NoError(t, res.Err)
	require.NotNil(t, res.Record)
	k := kinds(res.Record)

	// Operations, from invocation to answer, in pairs.
	assert.Equal(t, int64(2*faultyRounds), res.Operations)
	assert.Equal(t, 2*faultyRounds, k[record.EventOpBegin])
	assert.Equal(t, k[record.EventOpBegin], k[record.EventOpEnd])
	begun := map[int64]bool{}
	for _, e := range res.Record.Events {
		switch e.Kind {
		case record.EventOpBegin:
			begun[e.Ref] = true
		case record.EventOpEnd:
			assert.True(t, begun[e.Ref], "answer %d without its invocation", e.Ref)
		}
	}

	// Statements on their connection with their snapshot, commits on the
	// database; every commit of the log names its interval.
	var stmts, failed, commits int
	for _, e := range res.Record.Events {
		if e.Kind != record.EventInterval {
			continue
		}
		assert.LessOrEqual(t, e.From, e.At)
		switch {
		case e.Object == "conn 1" && strings.Contains(e.Text, "snapshot +"):
			stmts++
		case e.Object == "conn 1" && strings.Contains(e.Text, "failed"):
			failed++
		case e.Object == "db" && strings.HasPrefix(e.Text, "commit #"):
			commits++
		}
	}
	assert.Positive(t, stmts)
	assert.Positive(t, failed, "a failed statement is an interval too")
	log := fw.db.Commits()
	require.NotEmpty(t, log)
	assert.Equal(t, len(log), commits)
	for _, c := range log {
		require.GreaterOrEqual(t, int(c.Event), 0)
		e := res.Record.Events[c.Event]
		assert.Equal(t, record.EventInterval, e.Kind)
		assert.Equal(t, fmt.Sprintf("commit #%d inc", c.Seq), e.Text)
		assert.Equal(t, c.At.Sub(sim.Epoch), e.At)
	}

	// Messages: sent once, received or lost per subscriber.
	assert.Equal(t, fw.bus.Published(), k[record.EventSend])
	assert.Equal(t, faultyRounds, fw.bus.Published())
	assert.Equal(t, fw.received, k[record.EventReceive])
	assert.Positive(t, k[record.EventLost])
	lost := 0
	for _, recs := range fw.bus.Records() { //windtunnel:unordered summing counts
		for _, r := range recs {
			if r.Fate() == simbus.Lost {
				lost++
			}
		}
	}
	assert.Equal(t, lost, k[record.EventLost])

	// Faults: each one injected is recorded, and kept by the seed.
	assert.Positive(t, k[record.EventFault])
	assert.Equal(t, simtest.ChoicesOf(&res).Kept.Faults, int64(k[record.EventFault]))
	assert.Zero(t, simtest.ChoicesOf(&res).Dropped.Faults+simtest.ChoicesOf(&res).Dropped.Operations)

	// The record changes nothing: the same seed hashes the same without it.
	var plain faultyWorld
	again := sim.Run(sim.Config{Seed: 4}, plain.run)
	require.NoError(t, again.Err)
	assert.Equal(t, again.Hash, res.Hash)
	assert.Equal(t, res.Operations, again.Operations)
}

func TestEditedChoicesDropTheWorldsFaultsAndOperations(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { editedChoices(t, seed) })
	}
}

func editedChoices(t *testing.T, seed uint64) {
	var orig faultyWorld
	rec := sim.Run(simtest.RecordChoices(sim.Config{Seed: seed}), orig.run)
	require.NoError(t, rec.Err)
	require.False(t, simtest.ChoicesOf(&rec).ChoicesCut)
	require.Positive(t, simtest.ChoicesOf(&rec).Kept.Faults)
	keeps := simtest.KeepsOf(rec)
	require.Len(t, keeps.Faults, int(simtest.ChoicesOf(&rec).Kept.Faults), "a Keep site per fault")
	require.Len(t, keeps.Operations, 2*faultyRounds)

	// The unedited lists replay the seed's run exactly.
	var same faultyWorld
	r := sim.Run(simtest.ReplayChoices(sim.Config{Seed: seed}, rec, keeps), same.run)
	require.NoError(t, r.Err)
	assert.Equal(t, rec.Hash, r.Hash)

	// Every fault dropped: none is injected, every operation still runs.
	var clean faultyWorld
	r = sim.Run(simtest.ReplayChoices(sim.Config{Seed: seed, Record: true}, rec, keeps.NoFaults()), clean.run)
	require.NoError(t, r.Err)
	assert.Zero(t, simtest.ChoicesOf(&r).Kept.Faults, "no fault injected")
	assert.Equal(t, simtest.ChoicesOf(&rec).Kept.Faults, simtest.ChoicesOf(&r).Dropped.Faults, "exactly the recorded faults were dropped")
	assert.Equal(t, rec.Operations, r.Operations)
	assert.Zero(t, kinds(r.Record)[record.EventFault])
	st := clean.db.Stats()
	assert.Zero(t, st.Slow, "no slow statement")
	assert.Zero(t, st.WritesFailed, "no failed write")
	assert.Equal(t, int64(faultyRounds), st.Commits)
	for name, recs := range clean.bus.Records() { //windtunnel:unordered per-subscriber checks
		for _, m := range recs {
			assert.Equal(t, simbus.Delivered, m.Fate(), "%s #%d", name, m.Seq)
			assert.Len(t, m.Calls, 1, "%s #%d: no duplicate", name, m.Seq)
			assert.False(t, m.Reordered, "%s #%d", name, m.Seq)
			assert.LessOrEqual(t, m.Calls[0].Sub(m.SentAt), ms(5), "%s #%d: no delay from the tail", name, m.Seq)
		}
	}

	// The first few operations dropped: fewer operations, and no call to
	// the database for them.
	var fewer faultyWorld
	r = sim.Run(simtest.ReplayChoices(sim.Config{Seed: seed}, rec, keeps.Without(sim.KeepOperation, 0, 1, 2)), fewer.run)
	require.NoError(t, r.Err)
	assert.Less(t, r.Operations, rec.Operations)
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Operations, int64(1))
	assert.Equal(t, rec.Operations, r.Operations+simtest.ChoicesOf(&r).Dropped.Operations, "every round still asks for both operations")
}

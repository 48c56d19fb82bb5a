package pods_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// lossyChurn flies the churn workload with slow open reads (fills that
// straddle revocations) on a bus that loses at least a fifth of the
// invalidations. It measures the non-member reads' grant-staleness
// against a window of 1 ms, which it does not hold: the world blames the
// worst read and the commit that made it stale.
func lossyChurn(w **pods.World, st *pods.Staleness, opts pods.ChurnOpts) func(*sim.Sim) {
	return func(s *sim.Sim) {
		world, _, err := pods.FlyChurn(s, opts)
		if err != nil {
			s.Failf("%v", err)
		}
		world.Claim = "OC-2"
		got, err := world.Staleness(true, time.Millisecond-time.Nanosecond, pods.NonMember)
		if err != nil {
			s.Failf("%v", err)
		}
		*w, *st = world, got
	}
}

func TestARecordedChurnShowsTheRunAndWhatBrokeTheWindow(t *testing.T) {
	opts := pods.ChurnOpts{SlowOpenReads: true, Lossy: true}
	var w *pods.World
	var st pods.Staleness
	res := sim.Run(sim.Config{Seed: 1, Record: true}, lossyChurn(&w, &st, opts))
	require.NoError(t, res.Err)
	require.NotNil(t, res.Record)
	events := res.Record.Events
	k := map[record.EventKind]int{}
	for _, e := range events {
		k[e.Kind]++
	}

	// Client operations in pairs; every recorded read and write points at
	// its answer.
	assert.Positive(t, k[record.EventOpBegin])
	assert.Equal(t, k[record.EventOpBegin], k[record.EventOpEnd])
	assert.Equal(t, int64(k[record.EventOpBegin]), res.Operations)
	require.NotEmpty(t, w.History.Reads)
	for _, r := range w.History.Reads {
		require.GreaterOrEqual(t, int(r.Event), 0)
		assert.Equal(t, record.EventOpEnd, events[r.Event].Kind)
		assert.Equal(t, time.Duration(r.Return), events[r.Event].At)
	}
	require.NotEmpty(t, w.History.Writes)
	for _, wr := range w.History.Writes {
		assert.Equal(t, record.EventOpEnd, events[wr.Event].Kind)
		c := events[wr.Commit]
		assert.Equal(t, record.EventInterval, c.Kind)
		assert.True(t, strings.HasPrefix(c.Text, "commit #"), c.Text)
		assert.GreaterOrEqual(t, c.At, time.Duration(wr.Call))
		assert.LessOrEqual(t, c.At, time.Duration(wr.Return))
	}

	// The database's statements, on their connections, with their
	// snapshot instants; the bus's messages and their fates; the faults.
	var stmts, commits int
	for _, e := range events {
		switch {
		case e.Kind == record.EventInterval && strings.HasPrefix(e.Object, "conn ") && strings.Contains(e.Text, " snapshot +"):
			stmts++
		case e.Kind == record.EventInterval && e.Object == "db" && strings.HasPrefix(e.Text, "commit #"):
			commits++
		}
	}
	assert.Positive(t, stmts)
	assert.Equal(t, len(w.DB.Commits()), commits)
	assert.Equal(t, w.Bus.Published(), k[record.EventSend])
	assert.Positive(t, k[record.EventReceive])
	assert.Positive(t, k[record.EventLost], "a lossy bus loses")
	assert.Positive(t, k[record.EventFault])
	assert.Equal(t, simtest.ChoicesOf(&res).Kept.Faults, int64(k[record.EventFault]))

	// What broke the window: the worst read, and the commit that ended its
	// answer's truth.
	require.NotNil(t, st.Witness)
	require.Greater(t, st.Witness.Staleness, time.Millisecond)
	read := w.History.Reads[st.Witness.Read.ID]
	assert.Contains(t, events[read.Event].Blame, "OC-2: grant-staleness "+st.Witness.Staleness.String()+" ≥ 1ms")
	require.True(t, st.Witness.Ended)
	ev := w.Tracker.CommitEvent(st.Witness.Read.Key, st.Witness.EndIndex)
	require.GreaterOrEqual(t, int(ev), 0)
	assert.Equal(t, record.EventInterval, events[ev].Kind)
	assert.Equal(t, time.Duration(st.Witness.EndCommit.At), events[ev].At, "the commit at the witness's instant")
	assert.Contains(t, events[ev].Blame, "OC-2: made read #")
	for _, e := range events {
		if e.Blame != "" {
			t.Logf("blamed %v %q at +%v: %s", e.Kind, e.Text, e.At, e.Blame)
		}
	}

	// Recording changes nothing: the same seed hashes the same without it.
	var w2 *pods.World
	var st2 pods.Staleness
	plain := sim.Run(sim.Config{Seed: 1}, lossyChurn(&w2, &st2, opts))
	require.NoError(t, plain.Err)
	assert.Equal(t, plain.Hash, res.Hash)
	assert.Equal(t, st.MaxStaleness, st2.MaxStaleness)
	assert.Equal(t, record.NoEvent, w2.History.Reads[0].Event)
}

// churnOps flies the churn workload without restarts: every admin step
// writes and every reader step reads, so a run asks for exactly
// Admins·AdminWrites + Readers·Reads operations.
func churnOps(s *sim.Sim) {
	if _, _, err := pods.FlyChurn(s, pods.ChurnOpts{SlowOpenReads: true, NoRestarts: true}); err != nil {
		s.Failf("%v", err)
	}
}

func TestDroppedOperationsAndFaultsAreNotIssued(t *testing.T) {
	c := pods.DefaultChurn()
	asked := int64(c.Admins*c.AdminWrites + c.Readers*c.Reads)
	rec := sim.Run(simtest.RecordChoices(sim.Config{Seed: 5}), churnOps)
	require.NoError(t, rec.Err)
	require.False(t, simtest.ChoicesOf(&rec).ChoicesCut)
	assert.Equal(t, asked, rec.Operations)
	assert.Equal(t, asked, simtest.ChoicesOf(&rec).Kept.Operations)
	keeps := simtest.KeepsOf(rec)
	require.Len(t, keeps.Operations, int(asked))
	require.Len(t, keeps.Faults, int(simtest.ChoicesOf(&rec).Kept.Faults))
	require.NotEmpty(t, keeps.Faults)

	// The first few operations dropped: the clients skip them and go on.
	r := sim.Run(simtest.ReplayChoices(sim.Config{Seed: 5}, rec, keeps.Without(sim.KeepOperation, 0, 1, 2)), churnOps)
	require.NoError(t, r.Err)
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Operations, int64(1))
	assert.Less(t, r.Operations, rec.Operations)
	assert.Equal(t, asked, r.Operations+simtest.ChoicesOf(&r).Dropped.Operations, "every client step still asks")

	// Every fault dropped: the run takes the fault-free paths, injects
	// none and stays healthy (Keep answers are indexed by kind and
	// ordinal, so no later answer lands on another question).
	r = sim.Run(simtest.ReplayChoices(sim.Config{Seed: 5}, rec, keeps.NoFaults()), churnOps)
	require.NoError(t, r.Err)
	assert.GreaterOrEqual(t, simtest.ChoicesOf(&r).Dropped.Faults, int64(1))
	assert.Zero(t, simtest.ChoicesOf(&r).Kept.Faults)
}

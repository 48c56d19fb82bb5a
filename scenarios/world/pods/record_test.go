package pods_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
)

// lossyChurn flies the churn workload with slow open reads (fills that
// straddle revocations) on a bus that loses at least a fifth of the
// invalidations, and measures the non-member reads' grant-staleness
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
	res := sim.Run(sim.Config{Seed: 4, Record: true}, lossyChurn(&w, &st, opts))
	require.NoError(t, res.Err)
	require.NotNil(t, res.Record)
	events := res.Record.Events
	k := map[sim.EventKind]int{}
	for _, e := range events {
		k[e.Kind]++
	}

	// Client operations in pairs; every recorded read and write points at
	// its answer.
	assert.Positive(t, k[sim.EventOpBegin])
	assert.Equal(t, k[sim.EventOpBegin], k[sim.EventOpEnd])
	assert.Equal(t, int64(k[sim.EventOpBegin]), res.Operations)
	require.NotEmpty(t, w.History.Reads)
	for _, r := range w.History.Reads {
		require.GreaterOrEqual(t, int(r.Event), 0)
		assert.Equal(t, sim.EventOpEnd, events[r.Event].Kind)
		assert.Equal(t, time.Duration(r.Return), events[r.Event].At)
	}
	require.NotEmpty(t, w.History.Writes)
	for _, wr := range w.History.Writes {
		assert.Equal(t, sim.EventOpEnd, events[wr.Event].Kind)
		c := events[wr.Commit]
		assert.Equal(t, sim.EventInterval, c.Kind)
		assert.True(t, strings.HasPrefix(c.Text, "commit #"), c.Text)
		assert.GreaterOrEqual(t, c.At, time.Duration(wr.Call))
		assert.LessOrEqual(t, c.At, time.Duration(wr.Return))
	}

	// The database's statements, on their connections, with their
	// snapshot instants; the bus's messages and their fates; the faults.
	var stmts, commits int
	for _, e := range events {
		switch {
		case e.Kind == sim.EventInterval && strings.HasPrefix(e.Object, "conn ") && strings.Contains(e.Text, " snapshot +"):
			stmts++
		case e.Kind == sim.EventInterval && e.Object == "db" && strings.HasPrefix(e.Text, "commit #"):
			commits++
		}
	}
	assert.Positive(t, stmts)
	assert.Equal(t, len(w.DB.Commits()), commits)
	assert.Equal(t, w.Bus.Published(), k[sim.EventSend])
	assert.Positive(t, k[sim.EventReceive])
	assert.Positive(t, k[sim.EventLost], "a lossy bus loses")
	assert.Positive(t, k[sim.EventFault])
	assert.Equal(t, res.Kept.Faults, int64(k[sim.EventFault]))

	// What broke the window: the worst read, and the commit that ended its
	// answer's truth.
	require.NotNil(t, st.Witness)
	require.Greater(t, st.Witness.Staleness, time.Millisecond)
	read := w.History.Reads[st.Witness.Read.ID]
	assert.Contains(t, events[read.Event].Blame, "OC-2: grant-staleness "+st.Witness.Staleness.String()+" ≥ 1ms")
	require.True(t, st.Witness.Ended)
	ev := w.Tracker.CommitEvent(st.Witness.Read.Key, st.Witness.EndIndex)
	require.GreaterOrEqual(t, int(ev), 0)
	assert.Equal(t, sim.EventInterval, events[ev].Kind)
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
	plain := sim.Run(sim.Config{Seed: 4}, lossyChurn(&w2, &st2, opts))
	require.NoError(t, plain.Err)
	assert.Equal(t, plain.Hash, res.Hash)
	assert.Equal(t, st.MaxStaleness, st2.MaxStaleness)
	assert.Equal(t, sim.NoEvent, w2.History.Reads[0].Event)
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
	rec := sim.Run(sim.Config{Seed: 5, RecordChoices: true}, churnOps)
	require.NoError(t, rec.Err)
	require.False(t, rec.ChoicesCut)
	assert.Equal(t, asked, rec.Operations)
	assert.Equal(t, asked, rec.Kept.Operations)
	keeps := sim.KeepsOf(rec.KeepSites)
	require.Len(t, keeps.Operations, int(asked))
	require.Len(t, keeps.Faults, int(rec.Kept.Faults))
	require.NotEmpty(t, keeps.Faults)

	// The first few operations dropped: the clients skip them and go on.
	r := sim.Run(sim.Config{Seed: 5, ReplayChoices: true, Choices: rec.Choices, Keeps: keeps.Without(sim.KeepOperation, 0, 1, 2)}, churnOps)
	require.NoError(t, r.Err)
	assert.GreaterOrEqual(t, r.Dropped.Operations, int64(1))
	assert.Less(t, r.Operations, rec.Operations)
	assert.Equal(t, asked, r.Operations+r.Dropped.Operations, "every client step still asks")

	// Every fault dropped: the run takes the fault-free paths, injects
	// none and stays healthy (Keep answers are indexed by kind and
	// ordinal, so no later answer lands on another question).
	r = sim.Run(sim.Config{Seed: 5, ReplayChoices: true, Choices: rec.Choices, Keeps: keeps.NoFaults()}, churnOps)
	require.NoError(t, r.Err)
	assert.GreaterOrEqual(t, r.Dropped.Faults, int64(1))
	assert.Zero(t, r.Kept.Faults)
}

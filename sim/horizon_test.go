package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// horizonWorld is ten operations of the main task, each with a fault asked
// inside it (Inside); with stop, the run fails after its fifth operation,
// as a fault under test would end it.
func horizonWorld(stop *bool, kept *[]int, faults *int) func(*Sim) {
	return func(s *Sim) {
		*kept, *faults = nil, 0
		for i := range 10 {
			if *stop && i == 5 {
				s.Failf("the fault ended the run after five operations")
			}
			if !s.Keep(KeepOperation) {
				continue
			}
			*kept = append(*kept, i)
			func() {
				defer s.inside().End()
				if s.Keep(KeepFault) {
					*faults++
				}
			}()
			s.Yield()
		}
	}
}

// A keyed replay answers the calls the recorded run never asked false:
// what a shrinker's edit wants. With Beyond set to the run's protocol.Horizon they
// are kept, as the seed would have gone on, and every call the run did ask
// keeps its answer: the dropped operation stays dropped.
func TestBeyondKeepsWhatTheRecordedRunNeverAsked(t *testing.T) {
	stop, kept, faults := true, []int(nil), 0
	body := horizonWorld(&stop, &kept, &faults)
	rec := Run(withReplay(Config{Seed: 3}, protocol.Options{RecordChoices: true}), body)
	require.Error(t, rec.Err)
	require.Equal(t, []int{0, 1, 2, 3, 4}, kept)
	require.NotNil(t, rec.recorded.Horizon)
	keeps := protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, 1) // an edit: the second operation dropped

	stop = false // the code without the fault goes on past where the run ended
	replay := func(k protocol.Keeps) Result {
		return Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: k}), body)
	}
	r := replay(keeps)
	require.NoError(t, r.Err)
	assert.Equal(t, []int{0, 2, 3, 4}, kept, "unlisted: every call past the run's end is dropped")
	assert.Equal(t, 4, faults)

	keeps.Beyond = rec.recorded.Horizon
	r = replay(keeps)
	require.NoError(t, r.Err)
	assert.Equal(t, []int{0, 2, 3, 4, 5, 6, 7, 8, 9}, kept, "past the horizon every call is kept; the dropped one stays dropped")
	assert.Equal(t, 9, faults, "the faults inside the operations past it too")
}

// The horizon of a run that ended inside an operation. The calls made in
// it so far are within, later ones in it and every later operation's are
// past it. An earlier operation's are within (the task had moved on).
func TestHorizonOfARunThatEndedInsideAnOperation(t *testing.T) {
	h := &protocol.Horizon{Tasks: map[string]protocol.TaskHorizon{"client": {Asked: [keepKinds]int{KeepOperation: 3}, Cur: 3, CurAsked: [keepKinds]int{KeepFault: 2}}}}
	for _, c := range []struct {
		what Keepable
		key  protocol.KeepKey
		past bool
	}{
		{KeepOperation, protocol.KeepKey{Task: "client", N: 2}, false},
		{KeepOperation, protocol.KeepKey{Task: "client", N: 3}, true},
		{KeepFault, protocol.KeepKey{Task: "client" + opMark + "3", N: 1}, false},
		{KeepFault, protocol.KeepKey{Task: "client" + opMark + "3", N: 2}, true},
		{KeepFault, protocol.KeepKey{Task: "client" + opMark + "2", N: 9}, false},
		{KeepFault, protocol.KeepKey{Task: "client" + opMark + "4", N: 0}, true},
		{KeepOperation, protocol.KeepKey{Task: "another", N: 0}, true},
	} {
		assert.Equal(t, c.past, h.Past(c.what, c.key), "%v %q #%d", c.what, c.key.Task, c.key.N)
	}
}

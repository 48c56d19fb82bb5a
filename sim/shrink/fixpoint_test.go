package shrink_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// pickedBad opens connections, each on its own task with a drawn colour,
// then picks one of the open ones by a draw and fails when the pick is red.
// While the pick's draw is the seed's, dropping an open before the red one
// moves the pick to another connection. Once the draws pass has made it
// the smallest (the first open), the opens before it are droppable. Only a
// second operations pass can see that.
func pickedBad(s *sim.Sim) {
	r := s.Rand()
	n := 8 + r.IntN(8)
	var open []int
	red := map[int]bool{}
	wg := s.NewWaitGroup("openers")
	for i := range n {
		wg.Add(1)
		s.Go(fmt.Sprintf("opener%d", i), func() {
			defer wg.Done()
			colour := s.Rand().IntN(4)
			if !s.Keep(sim.KeepOperation) {
				return
			}
			op := s.OpBegin("open %d", i)
			open = append(open, i)
			red[i] = colour == 3
			s.OpEnd(op, "ok")
		})
		_ = wg.Wait(context.Background()) // one at a time: the order is the tasks'
	}
	if len(open) == 0 {
		return
	}
	if pick := open[r.IntN(len(open))]; red[pick] {
		s.Failf("picked a red connection")
	}
}

// TestTheShrunkRunIsOneMinimalInOperations: no single operation of a
// shrunk run can be dropped and the run still fail the same way (the
// operations pass runs again after the passes that change the draws and
// the schedule, which can make an operation droppable).
func TestTheShrunkRunIsOneMinimalInOperations(t *testing.T) {
	for _, prog := range []struct {
		name string
		body func(*sim.Sim)
	}{{"picked-bad", pickedBad}, {"lost-update", lostUpdate}} {
		t.Run(prog.name, func(t *testing.T) {
			cfg, failure := firstFailing(t, prog.body)
			out, err := shrink.Shrink(runner(prog.body), cfg, failure, shrink.Options{})
			require.NoError(t, err)
			require.Empty(t, out.Stopped, "the shrink ran to its end")
			t.Logf("%s: %s", prog.name, out.Removed())
			ops := out.Keeps.Operations
			for at, kept := range ops {
				if !kept {
					continue
				}
				edited := append([]bool(nil), ops...)
				edited[at] = false
				try := cfg
				try = replaying(try, out)
				protocol.ConfigOf(&try).Keeps.Operations = edited
				try.Strategy = protocol.Guided(out.Decisions).(sim.Strategy)
				res := sim.Run(try, prog.body)
				if res.Err != nil && shrink.Signature(res.Err.Error()) == out.Signature {
					assert.Failf(t, "not 1-minimal", "dropping kept operation %d still fails: %v (shrunk: %s)", at, res.Err, out.After)
				}
			}
		})
	}
}

// fullQueue runs two tasks whose operations interleave. The bug needs all
// of one task's (its queue overflows only at its last push), so no cut of
// the run's end keeps it. The other task's play no part. Only dropping
// that task's whole workload at once shrinks it within a small budget.
func fullQueue(s *sim.Sim) {
	const each = 20
	queue := map[string]int{}
	wg := s.NewWaitGroup("pushers")
	wg.Add(2)
	for _, name := range []string{"a", "b"} {
		s.Go(name, func() {
			defer wg.Done()
			for range each {
				if s.Keep(sim.KeepOperation) {
					op := s.OpBegin("push %s", name)
					queue[name]++
					s.OpEnd(op, "ok")
				}
				s.Yield()
			}
		})
	}
	_ = wg.Wait(context.Background())
	if queue["b"] == each {
		s.Failf("queue b overflowed")
	}
}

func TestAWholeTaskIsDroppedAtOnce(t *testing.T) {
	cfg, failure := firstFailing(t, fullQueue)
	out, err := shrink.Shrink(runner(fullQueue), cfg, failure, shrink.Options{MaxAttempts: 30})
	require.NoError(t, err)
	assert.Equal(t, int64(40), out.Before.Operations)
	assert.Equal(t, int64(20), out.After.Operations, "task a's 20 pushes dropped: %s", out.Removed())
}

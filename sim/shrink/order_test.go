package shrink_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// orderBug fails when c writes before b and b before a's last step. Run
// without preemption from the start, a sleeps and b (the lower id) goes
// before c: no failure. So cutting the schedule short keeps c's preemption
// of a. Undoing that preemption (a's steps up to its sleep first, then c,
// then b) still fails, with none left. The schedule pass must stop there.
func orderBug(s *sim.Sim) {
	var order []string
	wg := s.NewWaitGroup("tasks")
	wg.Add(3)
	s.Go("a", func() {
		defer wg.Done()
		s.Yield()
		_ = s.Sleep(context.Background(), time.Millisecond)
		order = append(order, "a")
	})
	s.Go("b", func() { defer wg.Done(); order = append(order, "b") })
	s.Go("c", func() { defer wg.Done(); order = append(order, "c") })
	_ = wg.Wait(context.Background())
	if len(order) == 3 && order[0] == "c" && order[1] == "b" {
		s.Failf("order %v", order)
	}
}

func TestUndoingTheLastPreemptionEndsTheSchedulePass(t *testing.T) {
	cfg, failure := firstFailing(t, orderBug)
	out, err := shrink.Shrink(runner(orderBug), cfg, failure, shrink.Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(0), out.After.Preemptions)
}

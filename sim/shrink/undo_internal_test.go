package shrink

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/sim"
)

// Undoing a preemption moves the preempted task's next run to the step; a
// clock jump there is dropped; a switch right after a jump moves the task
// that ran before the jump.
func TestUndoPreemptionMovesARunOrDropsAJump(t *testing.T) {
	const c = sim.ClockDecision
	for _, tc := range []struct {
		name string
		dec  []int32
		step int
		want []int32
		ok   bool
	}{
		{"switch", []int32{0, 0, 1, 1, 0, 0}, 3, []int32{0, 0, 0, 0, 1, 1}, true},
		{"no switch", []int32{0, 0, 1}, 2, nil, false},
		{"jump dropped", []int32{0, c, 1, 0}, 2, []int32{0, 1, 0}, true},
		{"switch after a jump", []int32{0, c, 1, 0}, 3, []int32{0, c, 0, 1}, true},
		{"never again", []int32{0, 1, 1}, 2, nil, false},
		{"out of range", []int32{0, 1}, 5, nil, false},
		{"first step", []int32{1, 0}, 1, nil, false},
	} {
		got, ok := undoPreemption(tc.dec, tc.step)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

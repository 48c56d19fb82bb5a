package netthreads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPlanWindows(t *testing.T) {
	p := Plan{Tick: time.Second, Quiet: ms(300), Pauses: []Pause{{Stop: ms(5500), Restart: ms(20_400)}}}
	require.NoError(t, p.Validate())

	assert.False(t, p.OpAllowed(ms(1000)), "a pass instant")
	assert.False(t, p.OpAllowed(ms(1299)), "its quiet window")
	assert.True(t, p.OpAllowed(ms(1300)))
	assert.False(t, p.OpAllowed(ms(5500)), "the pause")
	assert.False(t, p.OpAllowed(ms(20_699)), "the restart's catch-up")
	assert.True(t, p.OpAllowed(ms(20_700)))
	assert.Equal(t, ms(1300), p.NextOp(ms(1000)))
	assert.Equal(t, ms(20_700), p.NextOp(ms(6000)))
	assert.Equal(t, ms(1400), p.NextOp(ms(1400)))

	assert.False(t, p.DeadlineAllowed(ms(2000), false), "on a tick: only for aligned threads")
	assert.True(t, p.DeadlineAllowed(ms(2000), true))
	assert.False(t, p.DeadlineAllowed(ms(2001), true))
	assert.True(t, p.DeadlineAllowed(ms(8000), true), "inside a pause is fine: the catch-up fires it")
	assert.False(t, p.DeadlineAllowed(ms(20_000), true), "the restart's tick, before the off-grid restart")
	assert.False(t, p.DeadlineAllowed(ms(20_600), false))
	assert.Equal(t, ms(20_700), p.NextDeadline(ms(20_100), false))
	assert.Equal(t, ms(3300), p.NextDeadline(ms(3000), false))
	assert.Equal(t, ms(3000), p.NextDeadline(ms(3000), true))
	assert.Equal(t, 2*time.Second, p.GridAfter(ms(1000)))
	assert.Equal(t, 2*time.Second, p.GridAfter(ms(1999)))
}

func TestPlanValidateRejects(t *testing.T) {
	for name, p := range map[string]Plan{ //windtunnel:unordered independent cases
		"no tick":          {Quiet: ms(1)},
		"quiet too long":   {Tick: time.Second, Quiet: ms(400)},
		"stop in a window": {Tick: time.Second, Quiet: ms(300), Pauses: []Pause{{Stop: ms(5100), Restart: ms(9000)}}},
		"restart late":     {Tick: time.Second, Quiet: ms(300), Pauses: []Pause{{Stop: ms(5500), Restart: ms(9500)}}},
		"empty pause":      {Tick: time.Second, Quiet: ms(300), Pauses: []Pause{{Stop: ms(5500), Restart: ms(5500)}}},
		"overlapping": {Tick: time.Second, Quiet: ms(300), Pauses: []Pause{
			{Stop: ms(5500), Restart: ms(9000)}, {Stop: ms(8500), Restart: ms(12_000)}}},
	} {
		assert.Error(t, p.Validate(), name)
	}
}

// Swarm draws valid worlds, and Validate rejects a budget too small for the
// quiet window and an aligned thread that could continue a pass.
func TestSwarmAndConfigValidate(t *testing.T) {
	for seed := range uint64(200) {
		c := Swarm(newRand(seed))
		require.NoError(t, c.Validate(), "seed %d: %s", seed, c)
	}
	c := Swarm(newRand(1))
	c.Threads[0].Aligned, c.Threads[0].Cop.Budget = false, 4
	assert.Error(t, c.Validate(), "continuations beyond the quiet window")
	c = Swarm(newRand(1))
	c.Threads[0].Aligned, c.Threads[0].Cop.Budget = true, 64
	assert.Error(t, c.Validate(), "an aligned thread that may continue")
	c = Swarm(newRand(1))
	c.Threads[0].Cop.Tick = 2 * time.Second
	c.Threads[0].Cop.Continuation = time.Millisecond
	assert.Error(t, c.Validate(), "a thread off the plan's grid")
	c = Swarm(newRand(1))
	c.Threads = nil
	assert.Error(t, c.Validate())
}

// SetPausesInTicks restarts each pause in the tick the given number of
// ticks after its stop's, on the grid or, for a clock jump, inside that
// tick early enough for the catch-up; and it draws as SetPauses does, in the
// same order (the two share setPauses: SetPauses's worlds did not change).
func TestSetPausesInTicksRestartsThatManyTicksLater(t *testing.T) {
	for seed := range uint64(50) {
		c := Swarm(newRand(seed))
		ticks := []int64{17, 16, 4097}
		c.SetPausesInTicks(newRand(seed), ticks, []bool{false, true, false})
		require.NoError(t, c.Validate(), "seed %d", seed)
		tick := c.Plan.Tick
		require.Len(t, c.Plan.Pauses, len(ticks))
		for i, p := range c.Plan.Pauses {
			assert.Equal(t, ticks[i], int64(p.Restart/tick-p.Stop/tick), "seed %d pause %d: %v..%v", seed, i, p.Stop, p.Restart)
			if i == 1 {
				assert.NotZero(t, p.Restart%tick, "seed %d: the clock jump restarts off the grid", seed)
			} else {
				assert.Zero(t, p.Restart%tick, "seed %d pause %d restarts on a tick", seed, i)
			}
		}

		a, b := Swarm(newRand(seed)), Swarm(newRand(seed))
		ra, rb := newRand(seed+1000), newRand(seed+1000)
		a.SetPauses(ra, []time.Duration{17 * tick, 16 * tick}, []bool{false, true})
		b.SetPausesInTicks(rb, []int64{5, 6}, []bool{false, true})
		assert.Equal(t, ra.Uint64(), rb.Uint64(), "seed %d: both draw as much", seed)
		assert.Equal(t, a.Plan.Pauses[0].Stop, b.Plan.Pauses[0].Stop, "seed %d: the same first stop (a later one follows the restart before it)", seed)
	}
}

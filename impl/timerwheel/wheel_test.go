package timerwheel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// item is a test timer: a real deadline and a log of the instants it fired.
type item struct {
	timerwheel.Element
	id       int
	real     time.Time
	fired    []time.Time
	onExpire func(now time.Time)
}

func (i *item) Deadline() time.Time { return i.real }

func (i *item) Expired(now time.Time) {
	i.real = time.Time{}
	i.fired = append(i.fired, now)
	if i.onExpire != nil {
		i.onExpire(now)
	}
}

func sec(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }

func newWheel(t *testing.T, buckets int) *timerwheel.Wheel {
	t.Helper()
	w, err := timerwheel.New(origin, time.Second, buckets)
	require.NoError(t, err)
	return w
}

// arm sets the real deadline and schedules it there.
func arm(w *timerwheel.Wheel, it *item, at time.Time) {
	it.real = at
	w.Schedule(it, at)
}

func expire(t *testing.T, w *timerwheel.Wheel, now time.Time, budget int) timerwheel.Pass {
	t.Helper()
	p, err := w.Expire(now, budget)
	require.NoError(t, err)
	return p
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		tick    time.Duration
		buckets int
		msg     string
	}{
		{0, 8, "tick must be positive"},
		{-time.Second, 8, "tick must be positive"},
		{time.Second, 0, "power of two"},
		{time.Second, 12, "power of two"},
		{time.Second, -4, "power of two"},
		{time.Second, timerwheel.MaxBuckets * 2, "power of two"},
	} {
		_, err := timerwheel.New(origin, tc.tick, tc.buckets)
		require.Error(t, err, "tick %v buckets %d", tc.tick, tc.buckets)
		assert.Contains(t, err.Error(), tc.msg)
	}
	w, err := timerwheel.New(origin, time.Second, 1)
	require.NoError(t, err, "a one-bucket ring is degenerate but valid")
	assert.Equal(t, 1, w.Buckets())
}

func TestTickOfFloorsBeforeOrigin(t *testing.T) {
	w := newWheel(t, 8)
	assert.Equal(t, int64(0), w.TickOf(sec(0)))
	assert.Equal(t, int64(0), w.TickOf(sec(0.999)))
	assert.Equal(t, int64(1), w.TickOf(sec(1)))
	assert.Equal(t, int64(-1), w.TickOf(sec(-0.5)))
	assert.Equal(t, int64(-1), w.TickOf(sec(-1)))
	assert.Equal(t, int64(-2), w.TickOf(sec(-1.5)))
	assert.Equal(t, sec(3), w.TickStart(3))
}

// TW-6: schedule cancels first, cancel is O(1) and a no-op when unscheduled.
func TestScheduleCancelsFirstAndCancelIsIdempotent(t *testing.T) {
	w := newWheel(t, 8)
	a, b := &item{id: 1}, &item{id: 2}
	w.Cancel(a) // unscheduled: no-op
	assert.Equal(t, 0, w.Len())
	assert.False(t, a.Scheduled())

	arm(w, a, sec(5))
	arm(w, b, sec(5))
	arm(w, a, sec(2)) // moves, does not duplicate
	assert.Equal(t, 2, w.Len())
	at, ok := a.WheelDeadline()
	assert.True(t, ok)
	assert.Equal(t, sec(2), at)

	w.Cancel(b)
	w.Cancel(b)
	assert.Equal(t, 1, w.Len())
	_, ok = b.WheelDeadline()
	assert.False(t, ok)

	w.Schedule(a, time.Time{}) // a zero deadline cancels
	assert.Equal(t, 0, w.Len())
	p := expire(t, w, sec(10), 100)
	assert.Equal(t, 0, p.Visited)
}

func TestScheduleMovesBetweenWheels(t *testing.T) {
	w1, w2 := newWheel(t, 8), newWheel(t, 8)
	a := &item{}
	arm(w1, a, sec(1))
	arm(w2, a, sec(1))
	assert.Equal(t, 0, w1.Len())
	assert.Equal(t, 1, w2.Len())
	assert.Equal(t, timerwheel.Lost, w1.Check(a))
	assert.Equal(t, timerwheel.OK, w2.Check(a))
}

// TW-2: an element fires at the first pass strictly after its deadline, and
// a pass exactly at the deadline does not fire it.
func TestFiresOnlyOnceDeadlinePassed(t *testing.T) {
	w := newWheel(t, 8)
	a, b := &item{}, &item{}
	arm(w, a, sec(2.5))
	arm(w, b, sec(3)) // exactly on a tick boundary
	for s := 0; s <= 2; s++ {
		p := expire(t, w, sec(float64(s)), 100)
		assert.Equal(t, 0, p.Visited, "pass at %ds visits nothing: no bucket with a passed deadline", s)
	}
	p := expire(t, w, sec(3), 100)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Fired: 1}, p)
	assert.Equal(t, []time.Time{sec(3)}, a.fired)
	assert.Empty(t, b.fired, "a deadline equal to now has not passed")
	p = expire(t, w, sec(4), 100)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Fired: 1}, p)
	assert.Equal(t, []time.Time{sec(4)}, b.fired)
}

// TW-1 and TW-2 at the boundary: the wheel holds 10 s, activity moved the
// real deadline to exactly 11 s, the instant of the pass that visits the
// bucket. The pass must re-arm it (not passed yet), and the pass at 12 s
// fires it. Firing on <= would fire it at 11 s, before its deadline passed.
func TestRearmWhenRealDeadlineEqualsNow(t *testing.T) {
	w := newWheel(t, 16)
	a := &item{}
	arm(w, a, sec(10))
	a.real = sec(11) // activity: real deadline later, wheel untouched
	for s := 1; s <= 10; s++ {
		assert.Equal(t, 0, expire(t, w, sec(float64(s)), 100).Visited)
	}
	p := expire(t, w, sec(11), 100)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Rearmed: 1}, p)
	assert.Empty(t, a.fired)
	at, ok := a.WheelDeadline()
	require.True(t, ok)
	assert.Equal(t, sec(11), at, "re-armed at the real deadline, not later")
	p = expire(t, w, sec(12), 100)
	assert.Equal(t, 1, p.Fired)
	assert.Equal(t, []time.Time{sec(12)}, a.fired)
}

// An element whose real deadline vanished is dropped without firing.
func TestDropsElementWithoutDeadline(t *testing.T) {
	w := newWheel(t, 8)
	a := &item{}
	arm(w, a, sec(1))
	a.real = time.Time{}
	p := expire(t, w, sec(2), 100)
	assert.Equal(t, timerwheel.Pass{Buckets: 3, Visited: 1, Dropped: 1}, p)
	assert.False(t, a.Scheduled())
	assert.Empty(t, a.fired)
}

// A deadline already behind the cursor is clamped to the cursor: the next
// pass fires it.
func TestPastDeadlineClampsToCursor(t *testing.T) {
	w := newWheel(t, 8)
	expire(t, w, sec(5), 100)
	assert.Equal(t, int64(6), w.Cursor())
	a := &item{}
	arm(w, a, sec(-100))
	p := expire(t, w, sec(6), 100)
	assert.Equal(t, 1, p.Fired)
	assert.Equal(t, []time.Time{sec(6)}, a.fired)
}

// TW-5: a deadline three rings ahead is visited once per ring until due:
// exactly three visits with a pass every tick.
func TestWraparoundVisitsOncePerRing(t *testing.T) {
	w := newWheel(t, 8)
	a := &item{}
	arm(w, a, sec(20.5)) // tick 21, slot 5: visited at ticks 5, 13 and 21
	visits := 0
	var visitedAt []int
	for s := 1; s <= 30; s++ {
		p := expire(t, w, sec(float64(s)), 100)
		if p.Visited > 0 {
			visitedAt = append(visitedAt, s)
		}
		visits += p.Visited
		assert.Equal(t, map[bool]int{true: 2, false: 1}[s == 1], p.Buckets, "ticks 0 and 1, then one bucket per one-tick pass")
	}
	assert.Equal(t, 3, visits)
	assert.Equal(t, []int{5, 13, 21}, visitedAt)
	assert.Equal(t, []time.Time{sec(21)}, a.fired)
	assert.Equal(t, timerwheel.Totals{Passes: 30, Buckets: 31, Visited: 3, Fired: 1, Rearmed: 2}, w.Totals())
}

// TW-5: a clock jump longer than the ring fast-forwards the cursor: the pass
// examines each bucket once and visits each element once, and the passes
// after it examine one bucket each and visit only what that bucket holds.
func TestJumpLongerThanRingFastForwards(t *testing.T) {
	w := newWheel(t, 8)
	due, far := make([]*item, 20), make([]*item, 20)
	for i := range due {
		due[i] = &item{id: i}
		arm(w, due[i], sec(float64(1+i%7)+0.5)) // due before the jump
		far[i] = &item{id: 100 + i}
		arm(w, far[i], sec(1000.5+float64(8*(i%3)))) // ticks 1001, 1009, 1017: all slot 1
	}
	p := expire(t, w, sec(100), 1000) // 100 ticks = 12.5 rings in one jump
	assert.Equal(t, timerwheel.Pass{Buckets: 8, Visited: 40, Fired: 20, Rearmed: 20}, p)
	assert.Equal(t, int64(101), w.Cursor())
	for _, it := range due {
		assert.Equal(t, []time.Time{sec(100)}, it.fired)
	}
	for s := 101; s <= 104; s++ { // slots 5, 6, 7, 0
		p = expire(t, w, sec(float64(s)), 1000)
		assert.Equal(t, timerwheel.Pass{Buckets: 1}, p, "pass at %ds", s)
	}
	p = expire(t, w, sec(105), 1000) // slot 1: once per ring until due
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 20, Rearmed: 20}, p)
	for _, it := range far {
		assert.Empty(t, it.fired)
	}
}

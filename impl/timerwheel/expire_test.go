package timerwheel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

func TestExpireValidatesBudget(t *testing.T) {
	w := newWheel(t, 8)
	for _, b := range []int{0, -1} {
		_, err := w.Expire(sec(1), b)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "budget must be positive")
	}
	assert.Equal(t, int64(0), w.Cursor(), "a rejected pass moves nothing")
}

// TW-4: a pass stops at the budget without advancing past unvisited work,
// and the next call continues in the same bucket.
func TestBudgetStopsWithoutSkippingWork(t *testing.T) {
	w := newWheel(t, 8)
	var items []*item
	for i := range 10 {
		items = append(items, &item{id: i})
		arm(w, items[i], sec(2.5)) // tick 3
	}
	for i := range 3 {
		items = append(items, &item{id: 10 + i})
		arm(w, items[10+i], sec(3.5)) // tick 4
	}
	p := expire(t, w, sec(5), 4)
	assert.Equal(t, timerwheel.Pass{Buckets: 4, Visited: 4, Fired: 4, Exhausted: true}, p)
	assert.Equal(t, int64(3), w.Cursor(), "the cursor stays on the unfinished bucket")
	p = expire(t, w, sec(5.001), 4)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 4, Fired: 4, Exhausted: true}, p)
	p = expire(t, w, sec(5.002), 4)
	assert.Equal(t, timerwheel.Pass{Buckets: 2, Visited: 4, Fired: 4, Exhausted: true}, p)
	assert.Equal(t, int64(4), w.Cursor())
	p = expire(t, w, sec(5.003), 4)
	assert.Equal(t, timerwheel.Pass{Buckets: 2, Visited: 1, Fired: 1}, p)
	assert.Equal(t, int64(6), w.Cursor())
	for _, it := range items {
		assert.Len(t, it.fired, 1, "item %d fired once", it.id)
	}
	assert.Equal(t, int64(3), w.Totals().Exhausted)
}

// A budget that is used up exactly by the due work is not exhaustion: the
// pass looks at the rest of the due buckets (no element visits) to tell.
func TestBudgetExactlyUsedIsNotExhausted(t *testing.T) {
	w := newWheel(t, 8)
	for i := range 4 {
		arm(w, &item{id: i}, sec(1.5))
	}
	p := expire(t, w, sec(4), 4)
	assert.Equal(t, timerwheel.Pass{Buckets: 5, Visited: 4, Fired: 4}, p)
	assert.Equal(t, int64(5), w.Cursor())
}

// Expired may schedule and cancel; what it schedules waits for the end of the
// pass, so a pass visits each element at most once and cannot loop.
func TestExpiredMayScheduleAndCancel(t *testing.T) {
	w := newWheel(t, 8)
	a, b, c := &item{id: 1}, &item{id: 2}, &item{id: 3}
	arm(w, a, sec(0.5))
	arm(w, b, sec(0.5)) // same bucket as a, pushed later: visited first
	c.real = sec(8.5)   // tick 9 = slot 1, the bucket being swept
	b.onExpire = func(now time.Time) {
		arm(w, b, sec(-5)) // already passed: must wait for the next pass
		w.Cancel(a)        // a is still in the bucket: never visited
		w.Schedule(c, c.real)
		_, err := w.Expire(now, 10)
		assert.ErrorIs(t, err, timerwheel.ErrReentrant)
	}
	p := expire(t, w, sec(1), 10)
	assert.Equal(t, timerwheel.Pass{Buckets: 2, Visited: 1, Fired: 1}, p)
	assert.Empty(t, a.fired)
	assert.False(t, a.Scheduled())
	assert.Equal(t, 2, w.Len(), "b and c inserted when the pass ended")
	b.onExpire = nil
	p = expire(t, w, sec(2), 10)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Fired: 1}, p, "b fires at the next pass")
	assert.Len(t, b.fired, 2)
}

// A panic in Expired leaves a usable wheel: the deferred list is drained and
// the next pass continues.
func TestPanicInExpiredLeavesWheelUsable(t *testing.T) {
	w := newWheel(t, 8)
	a, b := &item{id: 1}, &item{id: 2}
	arm(w, a, sec(0.5))
	arm(w, b, sec(0.5))
	b.onExpire = func(time.Time) { panic("boom") }
	require.Panics(t, func() { _, _ = w.Expire(sec(1), 10) })
	p := expire(t, w, sec(1), 10)
	assert.Equal(t, 1, p.Fired, "a is still there and fires")
	assert.Len(t, a.fired, 1)
}

func TestAuditFindsLostAndLate(t *testing.T) {
	w := newWheel(t, 8)
	ok1, ok2, lost, late, none := &item{id: 1}, &item{id: 2}, &item{id: 3}, &item{id: 4}, &item{id: 5}
	arm(w, ok1, sec(5))
	arm(w, ok2, sec(5))
	ok2.real = sec(9)  // activity: later than the wheel, allowed
	lost.real = sec(5) // a live deadline never scheduled
	arm(w, late, sec(9))
	late.real = sec(5) // shortened without re-arming
	all := []timerwheel.Timer{ok1, ok2, lost, late, none}
	r := w.Audit(func(yield func(timerwheel.Timer) bool) {
		for _, x := range all {
			if !yield(x) {
				return
			}
		}
	})
	assert.Equal(t, 5, r.Checked)
	assert.Equal(t, []timerwheel.Timer{lost}, r.Lost)
	assert.Equal(t, []timerwheel.Timer{late}, r.Late)
	assert.False(t, r.Clean())
	assert.Equal(t, "lost", w.Check(lost).String())
	assert.Equal(t, "late", w.Check(late).String())
	assert.Equal(t, "ok", w.Check(none).String())

	w.Schedule(lost, lost.real)
	w.Schedule(late, late.real)
	r = w.Audit(func(yield func(timerwheel.Timer) bool) {
		for _, x := range all {
			if !yield(x) {
				return
			}
		}
	})
	assert.True(t, r.Clean())
}

// Elements re-armed into the slot of the unfinished bucket belong to a later
// ring: the continuation must not meet them again, or a bucket holding more
// wrapped elements than the budget would never finish.
func TestContinuationDoesNotRevisitWrappedElements(t *testing.T) {
	w := newWheel(t, 8)
	var far []*item
	for i := range 10 {
		far = append(far, &item{id: i})
		arm(w, far[i], sec(16.5)) // tick 17 = slot 1, two rings ahead
	}
	due := &item{id: 99}
	arm(w, due, sec(0.5)) // tick 1 = slot 1 too, pushed last: visited first
	var visited []int
	for c := 0; c < 5; c++ {
		p := expire(t, w, sec(1).Add(time.Duration(c)*time.Millisecond), 4)
		visited = append(visited, p.Visited)
		if !p.Exhausted {
			break
		}
	}
	assert.Equal(t, []int{4, 4, 3}, visited, "11 elements, each visited once")
	assert.Len(t, due.fired, 1)
	assert.Equal(t, int64(2), w.Cursor())
	assert.Equal(t, 10, w.Len())
}

// Between an exhausted pass and its continuation the bucket at the cursor is
// being swept: a deadline scheduled behind it is clamped to the next tick.
func TestScheduleBehindUnfinishedBucketClampsToNextTick(t *testing.T) {
	w := newWheel(t, 8)
	for i := range 3 {
		arm(w, &item{id: i}, sec(0.5))
	}
	p := expire(t, w, sec(1), 2)
	require.True(t, p.Exhausted)
	late := &item{id: 9}
	arm(w, late, sec(0.1))
	p = expire(t, w, sec(1.001), 2)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Fired: 1}, p, "the continuation finishes tick 1 only")
	assert.Empty(t, late.fired)
	p = expire(t, w, sec(2), 2)
	assert.Equal(t, timerwheel.Pass{Buckets: 1, Visited: 1, Fired: 1}, p)
	assert.Equal(t, []time.Time{sec(2)}, late.fired)
}

// A long pause after an exhausted pass: the continuation finishes the
// started bucket, then fast-forwards and examines every bucket once.
func TestJumpAfterExhaustedPass(t *testing.T) {
	w := newWheel(t, 8)
	var items []*item
	for i := range 6 {
		items = append(items, &item{id: i})
		arm(w, items[i], sec(float64(i)+0.5)) // ticks 1..6
	}
	p := expire(t, w, sec(1), 1)
	assert.Equal(t, timerwheel.Pass{Buckets: 2, Visited: 1, Fired: 1}, p, "budget used exactly, tick 1 done")
	arm(w, &item{id: 7}, sec(0.5)) // clamps to tick 2
	p = expire(t, w, sec(2), 1)
	require.True(t, p.Exhausted)
	p = expire(t, w, sec(100), 100) // 12 rings later
	assert.Equal(t, 1+8, p.Buckets, "the started bucket, then each bucket once")
	assert.Equal(t, 5, p.Fired)
	assert.Equal(t, 0, w.Len())
	assert.Equal(t, int64(101), w.Cursor())
}

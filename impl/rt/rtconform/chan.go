package rtconform

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// chanTests are the channel, select, Cond and Once tests: Go's rules for
// chan, select, sync.Cond and sync.Once, which both runtimes must keep.
var chanTests = []struct {
	name string
	f    func(t *testing.T, env Env, r rt.Runtime)
}{
	{"UnbufferedSendWaitsForReceiver", unbufferedRendezvous},
	{"BufferedChanQueuesInOrder", bufferedInOrder},
	{"ClosedChanDrainsThenYieldsZero", closedDrains},
	{"SendOrCloseOnClosedPanics", closedPanics},
	{"SelectDefaultAndReady", selectDefault},
	{"SelectBlocksUntilACaseIsReady", selectBlocks},
	{"SelectOnContextDone", selectDone},
	{"CondSignalAndBroadcast", condSignal},
	{"OnceRunsOnceAndOthersWait", onceWaits},
}

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

func unbufferedRendezvous(t *testing.T, env Env, r rt.Runtime) {
	ch := rt.NewChan[int](r, "handover", 0)
	assert.Equal(t, 0, ch.Cap())
	start := r.Now()
	sent := r.NewEvent("sent")
	r.Go("sender", func() {
		ch.Send(42)
		elapsed(t, env, r.Now().Sub(start), 20*time.Millisecond, "an unbuffered send returned only when the receiver came")
		sent.Set()
	})
	assert.NoError(t, r.Sleep(bg, 20*time.Millisecond))
	assert.False(t, sent.IsSet(), "the send went on with no receiver")
	v, ok := ch.Recv2()
	assert.True(t, ok)
	assert.Equal(t, 42, v)
	assert.NoError(t, sent.Wait(bg))
}

func bufferedInOrder(t *testing.T, _ Env, r rt.Runtime) {
	ch := rt.NewChan[string](r, "queue", 3)
	for _, s := range []string{"a", "b", "c"} {
		ch.Send(s) // never blocks: there is room
	}
	assert.Equal(t, 3, ch.Len())
	assert.Equal(t, 3, ch.Cap())
	got := r.NewEvent("fourth")
	r.Go("sender", func() { ch.Send("d"); got.Set() })
	assert.NoError(t, r.Sleep(bg, 5*time.Millisecond))
	assert.False(t, got.IsSet(), "a send on a full channel went on")
	var out []string
	for range 4 {
		out = append(out, ch.Recv())
	}
	assert.Equal(t, []string{"a", "b", "c", "d"}, out)
	assert.NoError(t, got.Wait(bg))
	assert.Equal(t, 0, ch.Len())
}

func closedDrains(t *testing.T, _ Env, r rt.Runtime) {
	ch := rt.NewChan[int](r, "results", 4)
	r.Go("producer", func() {
		for i := range 3 {
			ch.Send(i + 1)
		}
		ch.Close()
	})
	assert.Equal(t, []int{1, 2, 3}, slices.Collect(ch.All()), "range stops at close after the buffered values")
	v, ok := ch.Recv2()
	assert.False(t, ok)
	assert.Equal(t, 0, v, "a receive from a closed channel yields the zero value")
	var nilChan *rt.Chan[int]
	assert.Equal(t, 0, nilChan.Len())
}

func closedPanics(t *testing.T, _ Env, r rt.Runtime) {
	ch := rt.NewChan[int](r, "closed", 1)
	ch.Close()
	assert.NotNil(t, panicOf(func() { ch.Send(1) }), "send on a closed channel panics")
	assert.NotNil(t, panicOf(ch.Close), "closing a closed channel panics")
}

func selectDefault(t *testing.T, _ Env, r rt.Runtime) {
	a := rt.NewChan[int](r, "a", 1)
	b := rt.NewChan[int](r, "b", 1)
	var never *rt.Chan[int]
	i, _, _ := rt.TrySelect(r, a.RecvCase(), b.RecvCase(), never.RecvCase())
	assert.Equal(t, -1, i, "no case ready: the default")
	b.Send(7)
	i, v, ok := rt.TrySelect(r, a.RecvCase(), b.RecvCase(), never.SendCase(1))
	assert.Equal(t, 1, i)
	assert.Equal(t, 7, rt.As[int](v))
	assert.True(t, ok)
	i, _, _ = rt.TrySelect(r, a.SendCase(8), never.RecvCase())
	assert.Equal(t, 0, i, "a send case with room is ready")
	assert.Equal(t, 8, a.Recv())
	a.Close()
	i, v, ok = rt.Select(r, a.RecvCase(), never.RecvCase())
	assert.Equal(t, 0, i)
	assert.False(t, ok, "a closed channel's receive case is ready with ok false")
	assert.Nil(t, v)
}

func selectBlocks(t *testing.T, env Env, r rt.Runtime) {
	a := rt.NewChan[int](r, "a", 0)
	b := rt.NewChan[string](r, "b", 0)
	start := r.Now()
	r.Go("late sender", func() {
		_ = r.Sleep(bg, 15*time.Millisecond)
		b.Send("hello")
	})
	i, v, ok := rt.Select(r, a.RecvCase(), b.RecvCase())
	elapsed(t, env, r.Now().Sub(start), 15*time.Millisecond, "select waited for the sender")
	assert.Equal(t, 1, i)
	assert.Equal(t, "hello", rt.As[string](v))
	assert.True(t, ok)
	// A blocked send case meets a later receiver, and only one case goes on.
	r.Go("late receiver", func() {
		_ = r.Sleep(bg, 5*time.Millisecond)
		assert.Equal(t, 3, a.Recv())
	})
	i, _, _ = rt.Select(r, a.SendCase(3), b.SendCase("unread"))
	assert.Equal(t, 0, i)
	i, _, _ = rt.TrySelect(r, b.SendCase("still unread"))
	assert.Equal(t, -1, i, "the select's other case did not stay queued")
}

func selectDone(t *testing.T, env Env, r rt.Runtime) {
	ch := rt.NewChan[int](r, "never sent", 0)
	ctx, cancel := r.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	start := r.Now()
	i, _, ok := rt.Select(r, ch.RecvCase(), rt.DoneCase(ctx))
	elapsed(t, env, r.Now().Sub(start), 30*time.Millisecond, "select ended at the context's deadline")
	assert.Equal(t, 1, i)
	assert.False(t, ok)
	i, _, _ = rt.TrySelect(r, rt.DoneCase(bg))
	assert.Equal(t, -1, i, "Background's Done is never ready")
}

func condSignal(t *testing.T, _ Env, r rt.Runtime) {
	mu := r.NewMutex("state")
	c := r.NewCond("changed", mu)
	ready := 0
	var woke atomic.Int32
	wg := r.NewWaitGroup("waiters")
	const waiters = 3
	wg.Add(waiters)
	for i := range waiters {
		r.Go(fmt.Sprint("waiter", i), func() {
			defer wg.Done()
			mu.Lock()
			for ready == 0 {
				c.Wait()
			}
			ready--
			woke.Add(1)
			mu.Unlock()
		})
	}
	_ = r.Sleep(bg, 5*time.Millisecond)
	mu.Lock()
	ready = 1
	c.Signal()
	mu.Unlock()
	_ = r.Sleep(bg, 5*time.Millisecond)
	assert.Equal(t, int32(1), woke.Load(), "Signal let exactly one waiter through")
	mu.Lock()
	ready = waiters - 1
	c.Broadcast()
	mu.Unlock()
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, int32(waiters), woke.Load())
}

func onceWaits(t *testing.T, env Env, r rt.Runtime) {
	o := r.NewOnce("init")
	var runs atomic.Int32
	wg := r.NewWaitGroup("callers")
	start := r.Now()
	wg.Add(3)
	for i := range 3 {
		r.Go(fmt.Sprint("caller", i), func() {
			defer wg.Done()
			o.Do(func() {
				runs.Add(1)
				_ = r.Sleep(bg, 10*time.Millisecond)
			})
			elapsed(t, env, r.Now().Sub(start), 10*time.Millisecond, "Do returned after f finished")
		})
	}
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, int32(1), runs.Load())
}

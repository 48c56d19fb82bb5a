package inactivitycop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The handler in a real process, under the race detector: workers make
// activity from their own goroutines while the cop task (5 ms ticks, budget
// 4, audit on) times connections out and the callback closes them.
func TestHandlerRealGoroutines(t *testing.T) {
	r := rt.Real()
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick, cfg.Continuation, cfg.Budget, cfg.Buckets, cfg.Audit = 5*time.Millisecond, time.Millisecond, 4, 64, true
	logMu := r.NewMutex("log")
	var log []inactivitycop.Timeout
	var h *inactivitycop.Handler
	h, err := inactivitycop.NewHandler(r, "net-0", cfg, func(to inactivitycop.Timeout) {
		logMu.Lock()
		log = append(log, to)
		logMu.Unlock()
		h.Close(to.Conn)
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.Start(ctx)

	const workers, perWorker = 4, 20
	wg := r.NewWaitGroup("workers")
	for w := range workers {
		wg.Add(1)
		r.Go(fmt.Sprint("worker-", w), func() {
			defer wg.Done()
			var mine []*inactivitycop.Conn
			for i := range perWorker {
				c := h.Open()
				_ = h.SetInactivityTimeout(c, time.Duration(20+i)*time.Millisecond)
				mine = append(mine, c)
			}
			for range 30 { // ~30 ms of activity, then silence
				for _, c := range mine {
					h.NetActivity(c)
				}
				_ = r.Sleep(ctx, time.Millisecond)
			}
		})
	}
	require.NoError(t, wg.Wait(ctx))

	waitCtx, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	for {
		left := 0
		h.Do(func(cop *inactivitycop.Cop, _ time.Time) { left = cop.Len() })
		if left == 0 {
			break
		}
		require.NoError(t, r.Sleep(waitCtx, 2*time.Millisecond), "%d connections never timed out", left)
	}
	cancel()
	require.NoError(t, done.Wait(context.Background()))

	logMu.Lock()
	defer logMu.Unlock()
	require.Len(t, log, workers*perWorker)
	for _, to := range log {
		assert.True(t, to.Deadline.Before(to.At), "conn %d fired before its deadline", to.Conn.ID())
		assert.Equal(t, inactivitycop.Inactivity, to.Kind)
	}
	m := h.Metrics()
	assert.Equal(t, int64(workers*perWorker), m.Fired.Value())
	assert.Zero(t, m.AuditLost.Value())
	assert.Zero(t, m.AuditLate.Value())
	assert.GreaterOrEqual(t, m.PassMaxUS.Value()*m.Passes.Value(), m.PassTimeUS.Value(), "max >= mean")
}

// TW-10 in a real process, under the race detector. Four goroutines open 60
// connections each (with activity on their own) on a thread whose queue holds
// 40, while the cop task (2 ms ticks) times connections out. Every evicted
// connection gets exactly one Evicted callback, closed, and no timeout fired
// after it. The counter matches, and 40 connections stay open.
//
// "After" is in the cop's order, not the callbacks'. A pass reports what it
// fired once it has released the lock. So an Open that evicts one of those
// connections in between reports the eviction first; it happens under load.
// Each report's At was read under the lock, by the pass that fired it or the
// Open that evicted it, so At orders them. A connection evicted but left in
// the wheel fires at a later pass: its At is after the eviction's.
func TestHandlerRealEviction(t *testing.T) {
	r := rt.Real()
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick, cfg.Continuation, cfg.Budget, cfg.Buckets, cfg.MaxConns = 2*time.Millisecond, time.Millisecond, 8, 64, 40
	logMu := r.NewMutex("log")
	events := map[uint64][]inactivitycop.Timeout{}
	closedAtReport := true
	h, err := inactivitycop.NewHandler(r, "net-0", cfg, func(to inactivitycop.Timeout) {
		logMu.Lock()
		defer logMu.Unlock()
		events[to.Conn.ID()] = append(events[to.Conn.ID()], to)
		if to.Kind == inactivitycop.Evicted && !to.Conn.Closed() {
			closedAtReport = false
		}
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.Start(ctx)

	const workers, perWorker = 4, 60
	wg := r.NewWaitGroup("openers")
	for w := range workers {
		wg.Add(1)
		r.Go(fmt.Sprint("opener-", w), func() {
			defer wg.Done()
			var mine []*inactivitycop.Conn
			for i := range perWorker {
				c := h.Open()
				_ = h.SetInactivityTimeout(c, time.Duration(3+i%5)*time.Millisecond)
				mine = append(mine, c)
				h.NetActivity(mine[i/2])
				if i%10 == 0 {
					_ = r.Sleep(ctx, time.Millisecond)
				}
			}
		})
	}
	require.NoError(t, wg.Wait(ctx))
	require.NoError(t, r.Sleep(ctx, 30*time.Millisecond)) // every deadline passes
	cancel()
	require.NoError(t, done.Wait(context.Background()))

	logMu.Lock()
	defer logMu.Unlock()
	evicted := 0
	for id, ts := range events { //windtunnel:unordered counting
		n := 0
		var eviction time.Time
		for _, to := range ts {
			if to.Kind == inactivitycop.Evicted {
				n++
				eviction = to.At
			}
		}
		if n == 0 {
			continue
		}
		evicted++
		assert.Equal(t, 1, n, "conn %d: one eviction event", id)
		for _, to := range ts {
			if to.Kind != inactivitycop.Evicted {
				assert.False(t, to.At.After(eviction), "conn %d: its %v timeout fired at %v, after its eviction at %v", id, to.Kind, to.At, eviction)
			}
		}
	}
	assert.Equal(t, workers*perWorker-40, evicted)
	assert.True(t, closedAtReport, "an evicted connection is closed when it is reported")
	assert.Equal(t, int64(evicted), h.Metrics().Evicted.Value())
	open := 0
	h.Do(func(cop *inactivitycop.Cop, _ time.Time) { open = cop.Len() })
	assert.Equal(t, 40, open)
}

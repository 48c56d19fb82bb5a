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

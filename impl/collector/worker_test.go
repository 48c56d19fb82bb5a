package collector_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/sim"
)

// TestSimFlushWorkerSurvivesFailingDrains is DR-9 on virtual time: one
// point is recorded every 10 s for 5 minutes and the worker flushes once a
// minute; the 2nd cycle's drain panics and the 3rd returns an error. Both are
// logged and counted as worker errors, the cycles after them run, and every
// point is flushed exactly once in the end.
func TestSimFlushWorkerSurvivesFailingDrains(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var (
			logs          []string
			reg           stats.Registry
			flushed       int64
			cycles, errsN int64
			left          int64
		)
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			c, err := collector.New(s, collector.Config{BucketWidth: time.Minute})
			if err != nil {
				s.Failf("%v", err)
			}
			flush := c.FlushFunc(0, func(_ context.Context, bs []collector.Bucket) error {
				for _, b := range bs {
					flushed += b.Count
				}
				return nil
			})
			n := 0
			drain := func(ctx context.Context) error {
				n++
				switch n {
				case 2:
					panic("boom")
				case 3:
					return errors.New("store unavailable")
				}
				return flush(ctx)
			}
			w, err := collector.NewFlushWorker(s, drain, collector.WorkerConfig{
				Period:   time.Minute,
				Logf:     func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
				Registry: &reg,
			})
			if err != nil {
				s.Failf("%v", err)
			}
			if err := w.Start(); err != nil {
				s.Failf("%v", err)
			}
			if err := w.Start(); err == nil {
				s.Failf("a second Start must fail")
			}
			for range 30 {
				if err := c.Record("GetItem.latency_ms", s.Now(), 1); err != nil {
					s.Failf("%v", err)
				}
				_ = s.Sleep(context.Background(), 10*time.Second)
			}
			_ = s.Sleep(context.Background(), 5*time.Second) // 305 s: five cycles ran
			if err := w.Stop(context.Background()); err != nil {
				s.Failf("stop: %v", err)
			}
			cycles, errsN, left = w.Cycles(), w.Errors(), c.Len()
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.EqualValues(t, 5, cycles, "seed %d: cycles at 60, 120, 180, 240 and 300 s", seed)
		assert.EqualValues(t, 2, errsN, "seed %d: the panicking and the failing cycle", seed)
		assert.EqualValues(t, 2, reg.Snapshot()[collector.MetricWorkerErrors+`{worker="metrics_flush"}`])
		assert.EqualValues(t, 5, reg.Snapshot()[collector.MetricWorkerCycles+`{worker="metrics_flush"}`])
		require.Len(t, logs, 2)
		assert.Contains(t, logs[0], "boom")
		assert.Contains(t, logs[1], "store unavailable")
		assert.EqualValues(t, 30, flushed+left, "seed %d: no point lost or flushed twice", seed)
		assert.EqualValues(t, 0, left, "seed %d: the 300 s cycle flushed everything before 300 s", seed)
	}
}

// TestFlushWorkerRealRuntime runs DR-9 with real goroutines: the first
// drain panics on its own goroutine, the process survives, and later cycles
// run.
func TestFlushWorkerRealRuntime(t *testing.T) {
	var calls atomic.Int64
	w, err := collector.NewFlushWorker(rt.Real(), func(context.Context) error {
		if calls.Add(1) == 1 {
			panic("first drain fails")
		}
		return nil
	}, collector.WorkerConfig{Period: time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for w.Cycles() < 3 && ctx.Err() == nil {
		_ = rt.Real().Sleep(ctx, time.Millisecond)
	}
	require.NoError(t, w.Stop(ctx))
	require.GreaterOrEqual(t, w.Cycles(), int64(3))
	require.EqualValues(t, 1, w.Errors())
	stopped := w.Cycles()
	_ = rt.Real().Sleep(ctx, 5*time.Millisecond)
	require.Equal(t, stopped, w.Cycles(), "no cycle after Stop")
}

func TestFlushWorkerInvalidConfig(t *testing.T) {
	noop := func(context.Context) error { return nil }
	_, err := collector.NewFlushWorker(nil, noop, collector.WorkerConfig{})
	require.ErrorIs(t, err, collector.ErrInvalid)
	_, err = collector.NewFlushWorker(rt.Real(), nil, collector.WorkerConfig{})
	require.ErrorIs(t, err, collector.ErrInvalid)
	_, err = collector.NewFlushWorker(rt.Real(), noop, collector.WorkerConfig{Period: -time.Second})
	require.ErrorIs(t, err, collector.ErrInvalid)
	w, err := collector.NewFlushWorker(rt.Real(), noop, collector.WorkerConfig{})
	require.NoError(t, err)
	require.NoError(t, w.Stop(context.Background()), "stopping a worker never started")
	c, err := collector.New(rt.Real(), collector.Config{})
	require.NoError(t, err)
	require.ErrorIs(t, c.FlushFunc(-time.Second, nil)(context.Background()), collector.ErrInvalid)
}

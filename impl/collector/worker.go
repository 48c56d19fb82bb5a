package collector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// DefaultFlushPeriod is the seed's flush period: once a minute.
const DefaultFlushPeriod = time.Minute

// ErrDrainPanicked wraps the value of a panic recovered from a drain cycle.
var ErrDrainPanicked = errors.New("collector: drain panicked")

// WorkerConfig configures a FlushWorker. The zero value gives the defaults.
type WorkerConfig struct {
	// Period between two cycles. Zero means DefaultFlushPeriod.
	Period time.Duration
	// Logf receives one line per failed cycle. Nil discards them.
	Logf func(format string, args ...any)
	// Registry, if not nil, receives worker_cycles_total and
	// worker_errors_total with worker="metrics_flush".
	Registry *stats.Registry
}

// FlushWorker runs a drain function once per period, each time on a task of
// its own, the counterpart of the seed's spawn_blocking: the drain does not
// hold the worker's task, and a panic in it is recovered on its task. A
// cycle whose drain panics or returns an error is logged and counted as a
// worker error, and the worker goes on to the next cycle (DR-9).
type FlushWorker struct {
	r      rt.Runtime
	period time.Duration
	drain  func(context.Context) error
	logf   func(format string, args ...any)

	// startMu guards started: Start and Stop may race on real threads.
	startMu rt.Mutex
	started bool
	ctx     context.Context
	cancel  context.CancelFunc
	done    rt.Event

	cycles, errs *stats.CounterVec
}

// NewFlushWorker returns a stopped worker that will call drain once per
// period after Start.
func NewFlushWorker(r rt.Runtime, drain func(ctx context.Context) error, cfg WorkerConfig) (*FlushWorker, error) {
	switch {
	case r == nil:
		return nil, fmt.Errorf("%w: nil runtime", ErrInvalid)
	case drain == nil:
		return nil, fmt.Errorf("%w: nil drain function", ErrInvalid)
	case cfg.Period < 0:
		return nil, fmt.Errorf("%w: negative period %v", ErrInvalid, cfg.Period)
	}
	w := &FlushWorker{
		r:       r,
		period:  cmp.Or(cfg.Period, DefaultFlushPeriod),
		drain:   drain,
		logf:    cfg.Logf,
		done:    r.NewEvent("collector.flush.stopped"),
		startMu: r.NewMutex("collector.flush.start"),
		cycles:  stats.NewCounterVec("worker", "metrics_flush"),
		errs:    stats.NewCounterVec("worker", "metrics_flush"),
	}
	if w.logf == nil {
		w.logf = func(string, ...any) {}
	}
	w.ctx, w.cancel = r.WithCancel(context.Background())
	if cfg.Registry != nil {
		cfg.Registry.CounterVec(MetricWorkerCycles, "Flush cycles run.", w.cycles)
		cfg.Registry.CounterVec(MetricWorkerErrors, "Flush cycles whose drain failed or panicked (DR-9).", w.errs)
	}
	return w, nil
}

// Start starts the worker's task. Starting twice is an error.
func (w *FlushWorker) Start() error {
	w.startMu.Lock()
	defer w.startMu.Unlock()
	if w.started {
		return fmt.Errorf("%w: flush worker already started", ErrInvalid)
	}
	w.started = true
	w.r.Go("collector.flush", w.loop)
	return nil
}

// Stop asks the worker to stop and waits, until ctx ends, for its task to
// exit. A drain in progress is not interrupted once it has swapped the map
// out; a drain still waiting for the drain mutex gives up. Stopping a worker
// that was never started returns at once.
func (w *FlushWorker) Stop(ctx context.Context) error {
	w.cancel()
	w.startMu.Lock()
	started := w.started
	w.startMu.Unlock()
	if !started {
		return nil
	}
	return w.done.Wait(ctx)
}

// Cycles returns the number of cycles run.
func (w *FlushWorker) Cycles() int64 { return w.cycles.With("metrics_flush").Value() }

// Errors returns the number of cycles whose drain failed or panicked.
func (w *FlushWorker) Errors() int64 { return w.errs.With("metrics_flush").Value() }

func (w *FlushWorker) loop() {
	defer w.done.Set()
	// Bounded by the worker's context: Stop ends the sleep.
	for w.r.Sleep(w.ctx, w.period) == nil {
		w.cycle()
	}
}

// cycle runs the drain on its own task and waits for it to finish: a drain
// that has swapped the map out must put it back, so it is never abandoned.
func (w *FlushWorker) cycle() {
	finished := w.r.NewEvent("collector.flush.cycle")
	var err error
	w.r.Go("collector.flush.drain", func() {
		defer finished.Set()
		err = w.runDrain()
	})
	_ = finished.Wait(context.Background())
	w.cycles.With("metrics_flush").Inc()
	if err == nil || (w.ctx.Err() != nil && errors.Is(err, w.ctx.Err())) {
		return // success, or given up because the worker is stopping
	}
	w.errs.With("metrics_flush").Inc() // DR-9: counted for this cycle; the loop goes on
	w.logf("metrics flush: drain failed: %v", err)
}

func (w *FlushWorker) runDrain() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrDrainPanicked, p)
		}
	}()
	return w.drain(w.ctx)
}

// FlushFunc returns a drain function for a FlushWorker. Each call drains the
// points older than the bucket boundary at or before now−lag, so that every
// flushed bucket is complete unless points arrive later than lag, and passes
// the buckets to sink (if not nil). Drained buckets that sink fails to store
// are lost: sink owns any retry.
func (c *Collector) FlushFunc(lag time.Duration, sink func(context.Context, []Bucket) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if lag < 0 {
			return fmt.Errorf("%w: negative flush lag %v", ErrInvalid, lag)
		}
		now, err := toTS(c.rt.Now().Add(-lag))
		if err != nil {
			return err
		}
		buckets, _, err := c.Drain(ctx, time.Unix(0, floorTo(now, c.width)).UTC())
		if err != nil || sink == nil {
			return err
		}
		return sink(ctx, buckets)
	}
}

package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// drWorkerRun is what one seed of TestDR9_WorkerCountsFailures saw.
type drWorkerRun struct {
	cycles, calls, errs, injected int64
	recorded, flushed, lost, left int64
}

// TestDR9_WorkerCountsFailures is DR-9: a drain that fails is logged and
// counted as a worker error for that cycle, and the flush worker keeps
// running. Recorders on several keys record out-of-order points (up to 30 s
// late) for ten virtual minutes while the production flush worker drains
// once a minute through Collector.FlushFunc. Cycles 2 and 3 fail (a panic,
// an error), and every later cycle fails with probability 0.3: a panic or
// an error before the drain, or a sink that cannot store the buckets after
// it. Every cycle must run on time, each failure must be logged once and
// counted in worker_errors_total{worker="metrics_flush"}, and every point
// must be flushed, lost with a failed sink (the documented cost), or still
// buffered: none twice, none vanished.
func TestDR9_WorkerCountsFailures(t *testing.T) {
	const (
		period   = time.Minute
		duration = 10 * time.Minute
		lag      = 30 * time.Second
	)
	var total drWorkerRun
	sum := simtest.Run(t, simtest.Options{Seeds: 30}, func(s *sim.Sim) error {
		ctx := context.Background()
		r := s.Rand()
		var reg stats.Registry
		c, err := collector.New(s, collector.Config{BucketWidth: 10 * time.Second})
		if err != nil {
			return err
		}
		var run drWorkerRun
		var calledAt []time.Duration
		var injected []string
		sinkFails := false
		flush := c.FlushFunc(lag, func(_ context.Context, bs []collector.Bucket) error {
			var n int64
			for _, b := range bs {
				n += b.Count
			}
			if sinkFails {
				run.lost += n
				return errors.New("sink: store unavailable")
			}
			run.flushed += n
			return nil
		})
		drain := func(ctx context.Context) error {
			run.calls++
			calledAt = append(calledAt, s.Elapsed())
			fail := ""
			switch {
			case run.calls == 2:
				fail = "panic"
			case run.calls == 3:
				fail = "error"
			case run.calls > 3 && r.Float64() < 0.3:
				fail = []string{"panic", "error", "sink"}[r.IntN(3)]
			}
			sinkFails = fail == "sink"
			if fail != "" {
				injected = append(injected, fmt.Sprintf("cycle %d: %s", run.calls, fail))
			}
			switch fail {
			case "panic":
				panic(fmt.Sprintf("injected panic in cycle %d", run.calls))
			case "error":
				return fmt.Errorf("injected error in cycle %d", run.calls)
			}
			return flush(ctx)
		}
		var logs []string
		wk, err := collector.NewFlushWorker(s, drain, collector.WorkerConfig{Period: period, Registry: &reg,
			Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
		if err != nil {
			return err
		}
		if err := wk.Start(); err != nil {
			return err
		}
		keys := drKeys
		wg := s.NewWaitGroup("recorders")
		for i := range 3 {
			wg.Add(1)
			s.Go(fmt.Sprint("recorder-", i), func() {
				defer wg.Done()
				for s.Elapsed() < duration {
					ts := s.Now().Add(-time.Duration(r.Int64N(int64(lag))))
					if err := c.Record(keys[r.IntN(len(keys))], ts, float64(r.IntN(1000))); err != nil {
						s.Failf("record: %v", err)
					}
					run.recorded++
					_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(2*time.Second))))
				}
			})
		}
		_ = wg.Wait(ctx)
		_ = s.Sleep(ctx, duration+period/2-s.Elapsed())
		if err := wk.Stop(ctx); err != nil {
			return err
		}
		run.cycles, run.errs, run.injected = wk.Cycles(), wk.Errors(), int64(len(injected))
		run.left = c.Len()
		total.cycles += run.cycles
		total.errs += run.errs
		total.injected += run.injected
		total.recorded += run.recorded
		total.flushed += run.flushed
		total.lost += run.lost
		total.left += run.left

		want := int64((duration + period/2) / period)
		switch {
		case run.calls != want || run.cycles != want:
			return fmt.Errorf("DR-9: %d drain calls and %d cycles in %v at one per %v, want %d (failures: %v)", run.calls, run.cycles, duration+period/2, period, want, injected)
		case run.errs != run.injected:
			return fmt.Errorf("DR-9: worker_errors counts %d failed cycles, %d failed (%v)", run.errs, run.injected, injected)
		case int64(len(logs)) != run.injected:
			return fmt.Errorf("DR-9: %d log lines for %d failed cycles: %q", len(logs), run.injected, logs)
		}
		for i, at := range calledAt {
			// On time: a cycle takes no virtual time unless the run adds some
			// per scheduling step (-sim.steptime), so allow a second of drift.
			if due := time.Duration(i+1) * period; at < due || at > due+time.Second {
				return fmt.Errorf("DR-9: cycle %d ran at %v, want %v (failures: %v)", i+1, at, due, injected)
			}
		}
		for i, l := range logs {
			if !strings.Contains(l, "injected") && !strings.Contains(l, "sink") {
				return fmt.Errorf("DR-9: log line %d does not name its failure: %q", i, l)
			}
		}
		snap := reg.Snapshot()
		if got := snap[collector.MetricWorkerErrors+`{worker="metrics_flush"}`]; got != run.injected {
			return fmt.Errorf("DR-9: %s = %d, want %d", collector.MetricWorkerErrors, got, run.injected)
		}
		if run.flushed+run.lost+run.left != run.recorded {
			return fmt.Errorf("DR-9: %d points recorded, %d flushed + %d lost with a failed sink + %d buffered = %d",
				run.recorded, run.flushed, run.lost, run.left, run.flushed+run.lost+run.left)
		}
		return nil
	})
	claims.Report(t, claims.Record{
		ID: "DR-9", Verdict: claims.Verdict(sum.Failures == 0 && total.injected > 0),
		Measured: fmt.Sprintf("%d of %d flush cycles failed by injection (panic, error, or sink); worker_errors counted %d, one log line each; every cycle ran on time after a failure; %d points recorded = %d flushed + %d lost with a failed sink + %d still buffered",
			total.injected, total.cycles, total.errs, total.recorded, total.flushed, total.lost, total.left),
		Bound: "each failed cycle counted once, the next cycle runs", Value: float64(total.injected - total.errs), Unit: "uncounted failures", Seeds: sum.Seeds,
		Note: "buckets a failing sink could not store are lost: FlushFunc's documented contract (the sink owns any retry)",
	})
}

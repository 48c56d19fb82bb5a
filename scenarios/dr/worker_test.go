package dr

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
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// workerRun is what one seed of TestDR9_WorkerCountsFailures saw.
type workerRun struct {
	cycles, calls, errs, injected int64
	recorded, flushed, lost, left int64
	stopFailed, stopGaveUp        int64 // how the cycle running at the stop ended
	zeroPeriod                    int64 // the worker was configured with the zero period
}

// TestDR9_WorkerCountsFailures is DR-9: a drain that fails is logged and
// counted as a worker error for that cycle, and the flush worker keeps
// running. Recorders on several keys record out-of-order points (up to 30 s
// late) for ten virtual minutes while the production flush worker drains
// once a minute through Collector.FlushFunc. Cycles 2 and 3 fail (a panic,
// an error), and every later cycle fails with probability 0.3: a panic or
// an error before the drain, or a sink that cannot store the buckets after
// it. The last cycle is still running when the worker is stopped: it
// gives up with the worker's context's error, which is no failure, or fails
// anyway, which is one. Half the seeds configure the zero period, documented
// as the default, and every seed starts the worker twice: the second Start
// must be refused and start no second loop. Every cycle must run on time, each failure must be
// logged once and
// counted in worker_errors_total{worker="metrics_flush"}, and every point
// must be flushed, lost with a failed sink (the documented cost), or still
// buffered: none twice, none vanished.
func TestDR9_WorkerCountsFailures(t *testing.T) {
	const (
		period   = time.Minute
		duration = 10 * time.Minute
		lag      = 30 * time.Second
	)
	var counter string
	for _, m := range series.Table {
		if m.Claim == "DR-9" {
			counter = m.Series()
		}
	}
	if counter == "" {
		t.Fatal("DR-9: the claims table names no worker error counter")
	}
	claims.Run(t, claims.Check[workerRun]{Claim: "DR-9", Options: simtest.Options{Seeds: 30}, Fly: func(s *sim.Sim, _ claims.Bound) (workerRun, error) {
		ctx := context.Background()
		r := s.Rand()
		var reg stats.Registry
		var run workerRun
		c, err := collector.New(s, collector.Config{BucketWidth: 10 * time.Second})
		if err != nil {
			return run, err
		}
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
		// The last cycle is still running when Stop comes: it waits for the
		// worker's context to end, then gives up with that context's error
		// (an orderly stop: not a failure) or fails anyway (a failure
		// during the stop: counted like any other).
		stopping := "giveup"
		if r.IntN(2) == 0 {
			stopping = "error"
		}
		want := int64((duration + period/2) / period)
		drain := func(ctx context.Context) error {
			run.calls++
			calledAt = append(calledAt, s.Elapsed())
			if run.calls == want {
				if err := s.Sleep(ctx, time.Hour); err == nil {
					return errors.New("the worker's context did not end within an hour of Stop")
				}
				s.Probe("dr/cycle-running-at-stop")
				if stopping == "giveup" {
					run.stopGaveUp++
					return ctx.Err()
				}
				run.stopFailed++
				injected = append(injected, fmt.Sprintf("cycle %d: error during the stop", run.calls))
				return fmt.Errorf("injected error in cycle %d, during the stop", run.calls)
			}
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
		cfg := collector.WorkerConfig{Period: period, Registry: &reg,
			Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }}
		if r.IntN(2) == 0 {
			// The zero period is documented as the default: the seed's once
			// a minute, which the cycle times below hold it to.
			cfg.Period = 0
			run.zeroPeriod++
		}
		wk, err := collector.NewFlushWorker(s, drain, cfg)
		if err != nil {
			return run, fmt.Errorf("DR-9: NewFlushWorker with period %v: %w", cfg.Period, err)
		}
		if err := wk.Start(); err != nil {
			return run, fmt.Errorf("DR-9: the first Start: %w", err)
		}
		// A second Start is refused and starts no second loop: the drain
		// counts below would double.
		if err := wk.Start(); !errors.Is(err, collector.ErrInvalid) {
			return run, fmt.Errorf("DR-9: a second Start returned %v, want an error wrapping collector.ErrInvalid", err)
		}
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
			return run, err
		}
		// The worker's own Errors() is the count under test. The series, by
		// the name and type the claims table gives, is read as a Prometheus
		// server reads it: the registry's text exposition through the
		// Prometheus parser (series.Scrape), not the registry's own
		// Snapshot, which passed an exposition no scraper could parse (a
		// label value printed unquoted).
		scraped, err := series.Scrape(&reg, "worker_errors")
		if err != nil {
			return run, fmt.Errorf("DR-9: scraping the worker's metrics: %w", err)
		}
		run.cycles, run.injected = wk.Cycles(), int64(len(injected))
		run.errs = scraped[counter]
		run.left = c.Len()

		switch {
		case run.calls != want || run.cycles != want:
			return run, fmt.Errorf("DR-9: %d drain calls and %d cycles in %v at one per %v, want %d (failures: %v)", run.calls, run.cycles, duration+period/2, period, want, injected)
		case !registered(scraped, counter):
			return run, fmt.Errorf("DR-9: the exposition has no series %s (it has %d series)", counter, len(scraped))
		case run.errs != run.injected:
			return run, fmt.Errorf("DR-9: %s counts %d failed cycles, %d failed (%v)", counter, run.errs, run.injected, injected)
		case int64(len(logs)) != run.injected:
			return run, fmt.Errorf("DR-9: %d log lines for %d failed cycles: %q", len(logs), run.injected, logs)
		}
		for i, at := range calledAt {
			// On time: a cycle takes no virtual time unless the run adds some
			// per scheduling step (-sim.steptime), so allow a second of drift.
			if due := time.Duration(i+1) * period; at < due || at > due+time.Second {
				return run, fmt.Errorf("DR-9: cycle %d ran at %v, want %v (failures: %v)", i+1, at, due, injected)
			}
		}
		for i, l := range logs {
			if !strings.Contains(l, "injected") && !strings.Contains(l, "sink") {
				return run, fmt.Errorf("DR-9: log line %d does not name its failure: %q", i, l)
			}
		}
		if wk.Errors() != run.errs {
			return run, fmt.Errorf("DR-9: the worker says %d errors, %s says %d", wk.Errors(), counter, run.errs)
		}
		if run.flushed+run.lost+run.left != run.recorded {
			return run, fmt.Errorf("DR-9: %d points recorded, %d flushed + %d lost with a failed sink + %d buffered = %d",
				run.recorded, run.flushed, run.lost, run.left, run.flushed+run.lost+run.left)
		}
		return run, nil
	},
		Sample: func(x workerRun) claims.Sample {
			tally := map[string]int64{}
			tally["cycles"] += int64(x.cycles)
			tally["errs"] += int64(x.errs)
			tally["injected"] += int64(x.injected)
			tally["recorded"] += int64(x.recorded)
			tally["flushed"] += int64(x.flushed)
			tally["lost"] += int64(x.lost)
			tally["left"] += int64(x.left)
			tally["stopFailed"] += x.stopFailed
			tally["stopGaveUp"] += x.stopGaveUp
			tally["zeroPeriod"] += x.zeroPeriod
			smp := claims.Sample{Of: x.injected, Seen: true,
				Witness: fmt.Sprintf("%d of %d cycles failed by injection, %d counted", x.injected, x.cycles, x.errs)}
			for range max(x.injected-x.errs, x.errs-x.injected) {
				smp.Wrongly(func() string { return fmt.Sprintf("%d failed cycles, %d counted", x.injected, x.errs) })
			}
			smp.Tally = tally
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d flush cycles failed by injection (panic, error, or sink; %d of them while the worker stopped, and %d more cycles gave up at the stop, which is no failure); %s counted %d, one log line each; every cycle ran on time after a failure (%d seeds with the zero period, the default, each refusing a second Start); %d points recorded = %d flushed + %d lost with a failed sink + %d still buffered; %d seeds failed",
				o.Tally["injected"], o.Tally["cycles"], o.Tally["stopFailed"], o.Tally["stopGaveUp"], counter, o.Tally["errs"], o.Tally["zeroPeriod"], o.Tally["recorded"], o.Tally["flushed"], o.Tally["lost"], o.Tally["left"], o.Failed)
		},
		Probes: []claims.Probe{{Name: "dr/cycle-running-at-stop", What: "a flush cycle was still running when the worker was stopped", Min: 20}},
		More: claims.Hooks[workerRun]{
			Judge: func(o *claims.Outcome) string {
				// The default rule has judged the seeds; a run that injected no
				// failure proves nothing.
				if o.Tally["injected"] == 0 {
					o.Problems = append(o.Problems, "no cycle failed: the check injected nothing")
				}
				if o.Tally["zeroPeriod"] == 0 {
					o.Problems = append(o.Problems, "no seed configured the zero period: the default went unflown")
				}
				if len(o.Problems) > 0 {
					return findings.Violated
				}
				return findings.Holds
			},
		},
		Note: "buckets a failing sink could not store are lost: FlushFunc's documented contract (the sink owns any retry)",
	})
}

func registered(snap map[string]int64, series string) bool {
	_, ok := snap[series]
	return ok
}

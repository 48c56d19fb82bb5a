package lf

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// benchGoroutines is how many goroutines enter spans at once (LF-5).
const benchGoroutines = 8

// BenchmarkLF5_SpanEnterExit measures what LF-5's lock count costs: 8
// goroutines, each entering a span, logging an event that both installed
// filters (logs and telemetry) drop, and exiting, over and over. Both paths
// run in every iteration of the same benchmark, on the same plain lists:
// the span-aware filter forced onto them (before the change: one read lock
// per filter per enter and per exit) and the filter New chooses (the
// target table, after). It reports each path's wall time per
// enter+log+exit of one goroutine (ns/enter-exit-span-aware,
// ns/enter-exit-targets; the wall time of all 8 divided by the operations
// of all 8) and their ratio (span-aware/targets). This is a wall-clock
// benchmark on real goroutines (rt.Real()); no simulated task runs it.
//
//	go test ./scenarios/lf -run '^$' -bench BenchmarkLF5_SpanEnterExit -benchtime 2000000x
func BenchmarkLF5_SpanEnterExit(b *testing.B) {
	const logsList, otelList = "info,buzz_relay=debug", "warn"
	before := benchInstall(b, logfilter.NewSpanAware, logsList, otelList, logfilter.KindSpanAware)
	after := benchInstall(b, logfilter.New, logsList, otelList, logfilter.KindTargets)
	b.ResetTimer()
	// Half the iterations per path, the paths alternating in chunks so that
	// neither gets the machine's quieter moments.
	const chunks = 8
	per := max(b.N/(2*chunks*benchGoroutines), 1)
	var aware, targets time.Duration
	var ops int64
	for range chunks {
		aware += before.run(per)
		targets += after.run(per)
		ops += int64(per * benchGoroutines)
	}
	b.StopTimer()
	b.ReportMetric(float64(aware.Nanoseconds())/float64(ops), "ns/enter-exit-span-aware")
	b.ReportMetric(float64(targets.Nanoseconds())/float64(ops), "ns/enter-exit-targets")
	if targets > 0 {
		b.ReportMetric(float64(aware)/float64(targets), "span-aware/targets")
	}
	b.ReportMetric(benchGoroutines, "goroutines")
}

// benchPath is one installation of the two filters, with one span per
// goroutine.
type benchPath struct {
	logger *slog.Logger
	spans  []*logfilter.Span
}

func benchInstall(b *testing.B, mk func(rt.Runtime, string) (*logfilter.Filter, error), logsList, otelList string, want logfilter.Kind) *benchPath {
	b.Helper()
	logs, err := mk(rt.Real(), logsList)
	if err != nil {
		b.Fatal(err)
	}
	otel, err := mk(rt.Real(), otelList)
	if err != nil {
		b.Fatal(err)
	}
	if logs.Kind() != want || otel.Kind() != want {
		b.Fatalf("the benchmark's filters took the %v and %v paths, want %v", logs.Kind(), otel.Kind(), want)
	}
	spans := logfilter.NewSpans(logs, otel)
	discard := slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: logfiltertest.AllLevels})
	lh, err := spans.Handler(discard, logs)
	if err != nil {
		b.Fatal(err)
	}
	oh, err := spans.Handler(discard, otel)
	if err != nil {
		b.Fatal(err)
	}
	p := &benchPath{logger: slog.New(slog.NewMultiHandler(lh, oh)).With(logfilter.Target("buzz_relay::conn"))}
	if p.logger.Enabled(context.Background(), levelTrace) {
		b.Fatal("the benchmark's event must be filtered out")
	}
	for range benchGoroutines {
		p.spans = append(p.spans, spans.Start("buzz_relay", "conn"))
	}
	b.Cleanup(func() {
		for _, sp := range p.spans {
			sp.Close()
		}
	})
	return p
}

// run lets every goroutine enter its span, log a dropped event and exit n
// times, all starting together, and returns the wall time.
func (p *benchPath) run(n int) time.Duration {
	r := rt.Real()
	ready, start := r.NewWaitGroup("ready"), r.NewEvent("start")
	done := r.NewWaitGroup("done")
	for _, span := range p.spans {
		ready.Add(1)
		done.Add(1)
		r.Go("bench", func() {
			defer done.Done()
			ctx := context.Background()
			ready.Done()
			_ = start.Wait(ctx)
			for range n {
				inside := span.Enter(ctx)
				p.logger.Log(inside, levelTrace, "poll")
				span.Exit(inside)
			}
		})
	}
	_ = ready.Wait(context.Background())
	t0 := time.Now() //windtunnel:realtime a wall-clock benchmark on real goroutines, outside every simulated task
	start.Set()
	_ = done.Wait(context.Background())
	return time.Since(t0) //windtunnel:realtime the same benchmark's elapsed time
}

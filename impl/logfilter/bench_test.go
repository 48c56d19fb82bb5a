package logfilter_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// benchGoroutines is the number of goroutines that enter spans at once.
const benchGoroutines = 8

// BenchmarkSpanEnterExit measures the hot path of the source text (LF-5).
// Each of 8 goroutines enters a span, logs an event that both installed
// filters (logs and telemetry) drop, and exits, over and over. Both paths run
// in the same process on the same plain lists. "span-aware" is the span-aware
// filter forced onto them (EnvFilter, before the change); "targets" is what
// New chooses (Targets, after). ns/op is per enter+log+exit of one goroutine,
// over the wall time of all 8. The ns/enter-exit metric is the same figure,
// reported by name.
func BenchmarkSpanEnterExit(b *testing.B) {
	const logsList, otelList = "info,buzz_relay=debug", "warn"
	for _, path := range []struct {
		name string
		make func(list string) (*logfilter.Filter, error)
	}{
		{"span-aware", func(list string) (*logfilter.Filter, error) { return logfilter.NewSpanAware(rt.Real(), list) }},
		{"targets", func(list string) (*logfilter.Filter, error) { return logfilter.New(rt.Real(), list) }},
	} {
		b.Run(path.name, func(b *testing.B) {
			logs, err := path.make(logsList)
			if err != nil {
				b.Fatal(err)
			}
			otel, err := path.make(otelList)
			if err != nil {
				b.Fatal(err)
			}
			spans := logfilter.NewSpans(logs, otel)
			lh, err := spans.Handler(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: logfiltertest.AllLevels}), logs)
			if err != nil {
				b.Fatal(err)
			}
			oh, err := spans.Handler(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: logfiltertest.AllLevels}), otel)
			if err != nil {
				b.Fatal(err)
			}
			logger := slog.New(slog.NewMultiHandler(lh, oh)).With(logfilter.Target("buzz_relay::conn"))
			if logger.Enabled(context.Background(), logfilter.LevelTrace) {
				b.Fatal("the benchmark event must be filtered out")
			}

			var wg sync.WaitGroup
			start := make(chan struct{})
			per := b.N / benchGoroutines
			for g := range benchGoroutines {
				n := per
				if g < b.N%benchGoroutines {
					n++
				}
				span := spans.Start("buzz_relay", "conn")
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer span.Close()
					ctx := context.Background()
					<-start
					for range n {
						inside := span.Enter(ctx)
						logger.Log(inside, logfilter.LevelTrace, "poll")
						span.Exit(inside)
					}
				}()
			}
			b.ResetTimer()
			t0 := time.Now()
			close(start)
			wg.Wait()
			elapsed := time.Since(t0)
			b.StopTimer()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/enter-exit")
			b.ReportMetric(benchGoroutines, "goroutines")
		})
	}
}

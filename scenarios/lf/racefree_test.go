package lf

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestLF4_RealGoroutinesRaceFree is LF-4 "also under real goroutines":
// workers on rt.Real create spans of every name and target of the
// simulated check, enter them (and one conn span they all share), judge
// an event at every level from every target inside and outside them, exit
// and close them, with logs and telemetry installed together. Every
// answer of both handlers' Enabled must be the reference's (lf4Want).
// Under the race detector (make race, and the audit's Race mutants) it is
// LF-4's check for what the simulator cannot see: a span-aware filter's
// registry is a map behind its lock, and a lock left out where no
// scheduling point lies inside (a span's registration, its removal)
// changes nothing a simulated check observes, while real goroutines race
// on the map.
//
// Every worker yields after each step, so starts, enters, exits and
// closes interleave even with one processor (GOMAXPROCS=1, where the
// audit runs Race mutants) or on a loaded machine.
func TestLF4_RealGoroutinesRaceFree(t *testing.T) {
	const workers, rounds = 6, 150
	r := claims.Preempting(rt.Real()) // read holds yield inside, so two overlap even on one processor
	logs, err := logfilter.New(r, lf4Logs)
	if err != nil {
		t.Fatal(err)
	}
	otel, err := logfilter.New(r, lf4Otel)
	if err != nil {
		t.Fatal(err)
	}
	if logs.Kind() != logfilter.KindSpanAware || otel.Kind() != logfilter.KindSpanAware {
		t.Fatalf("LF-4: the lists must take the span-aware filter, got %v and %v", logs.Kind(), otel.Kind())
	}
	spans := logfilter.NewSpans(logs, otel)
	// Every level reaches the wrapped handler: Enabled is then the filter's
	// answer alone.
	everything := slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.Level(math.MinInt32)})
	lh, err := spans.Handler(everything, logs)
	if err != nil {
		t.Fatal(err)
	}
	oh, err := spans.Handler(everything, otel)
	if err != nil {
		t.Fatal(err)
	}
	// The event targets: the span targets, and one no directive names.
	eventTargets := append([]string{"elsewhere"}, lf4SpanTargets...)
	type pair struct{ logs, otel slog.Handler }
	byTarget := make([]pair, len(eventTargets))
	for i, target := range eventTargets {
		attrs := []slog.Attr{logfilter.Target(target)}
		byTarget[i] = pair{lh.WithAttrs(attrs), oh.WithAttrs(attrs)}
	}
	// One conn span every worker enters; its field task=-1 matches no
	// {task=0}.
	shared := &lf4Span{name: "conn", target: "buzz_relay", task: -1}
	shared.sp = spans.Start(shared.target, shared.name, slog.Int("task", shared.task))

	judged := make([]int, workers) // each worker's own slot, read after the run
	closed := make([][]*lf4Span, workers)
	// judge asks both handlers about every level from every target in tc,
	// and says how the first answer the reference disagrees with went.
	judge := func(tc *taskCtx) (int, error) {
		n := 0
		for i, target := range eventTargets {
			for _, l := range namedLevels {
				wantLogs, wantOtel := lf4Want(tc, target, l)
				gotLogs, gotOtel := byTarget[i].logs.Enabled(tc.ctx, l), byTarget[i].otel.Enabled(tc.ctx, l)
				n++
				if gotLogs != wantLogs || gotOtel != wantOtel {
					return n, fmt.Errorf("LF-4 on real goroutines: an event at %v from %q %s: logs %v (want %v), telemetry %v (want %v)",
						l, target, tc.names(), gotLogs, wantLogs, gotOtel, wantOtel)
				}
			}
		}
		return n, nil
	}
	worker := func(w int) error {
		for i := range rounds {
			tc := &taskCtx{ctx: context.Background()}
			var mine []*lf4Span
			// Up to three spans of the world's names and targets,
			// nested, and the shared one among them every third round.
			for d := range 1 + (w+i)%3 {
				sp := &lf4Span{name: lf4Names[(w+i+d)%len(lf4Names)], target: lf4SpanTargets[(w*3+i+d)%len(lf4SpanTargets)], task: w}
				sp.sp = spans.Start(sp.target, sp.name, slog.Int("task", sp.task))
				mine = append(mine, sp)
				r.Yield()
				if d == 1 && i%3 == 0 {
					tc.ctx = shared.sp.Enter(tc.ctx)
					tc.stack = append(tc.stack, frame{span: shared, live: true})
					r.Yield()
				}
				tc.ctx = sp.sp.Enter(tc.ctx)
				tc.stack = append(tc.stack, frame{span: sp, live: true})
				r.Yield()
				n, err := judge(tc)
				judged[w] += n
				if err != nil {
					return err
				}
			}
			for len(tc.stack) > 0 {
				top := tc.stack[len(tc.stack)-1]
				tc.ctx = top.span.sp.Exit(tc.ctx)
				tc.stack = tc.stack[:len(tc.stack)-1]
				r.Yield()
			}
			for _, sp := range mine {
				sp.sp.Close()
				sp.closed = true
				closed[w] = append(closed[w], sp)
				r.Yield()
			}
			n, err := judge(tc) // outside every span again
			judged[w] += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	claims.Concurrently(t, r, claims.Workers("worker", workers, worker)...)
	// Every span closed: entering one again enables nothing. A registry
	// that kept one lost a removal, or a registration that raced one.
	total, reentered := 0, 0
	for w := range workers {
		total += judged[w]
		for _, sp := range closed[w] {
			tc := &taskCtx{ctx: sp.sp.Enter(context.Background()), stack: []frame{{span: sp, live: false}}}
			n, err := judge(tc)
			total += n
			reentered++
			if err != nil {
				t.Error(err)
				break
			}
		}
	}
	shared.sp.Close()
	t.Logf("LF-4 on real goroutines: %d workers, %d rounds each, %d closed spans entered again after; %d answers of each filter judged", workers, rounds, reentered, total)
}

// discard is an io.Writer that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

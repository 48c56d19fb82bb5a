package lf

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims/racefree"
)

// TestLF4_RealGoroutinesRaceFree is LF-4 "also under real goroutines". It
// covers every registry shape of the simulated check (lf4Shapes: both
// filters span-aware, or one of them a target table, installed in either
// order), with logs and telemetry installed together. Workers on rt.Real
// create spans of every name and target of the simulated check and enter
// them (and one conn span they all share). They judge an event at every
// level from every target inside and outside them. They exit them in
// orders of their own (an outer span while inner ones are open too) and
// close them. Every answer of both handlers' Enabled must be the
// reference's (lf4Shape.want). Under the race detector (make race, and the
// audit's Race mutants) it is LF-4's check for what the simulator cannot
// see. A span-aware filter's registry is a map behind its lock. A lock
// left out where no scheduling point lies inside (a span's registration,
// its removal) changes nothing a simulated check observes, while real
// goroutines race on the map.
//
// Every worker yields after each step, so starts, enters, exits and
// closes interleave even with one processor (GOMAXPROCS=1, where the
// audit runs Race mutants) or on a loaded machine.
func TestLF4_RealGoroutinesRaceFree(t *testing.T) {
	// The shape of the source text (both filters span-aware) gets most of
	// the rounds: it is where both filters' registries race; the others
	// are there for the handlers' view of a mixed registry.
	for i, shape := range lf4Shapes {
		rounds := 25
		if i == 0 {
			rounds = 150
		}
		if !raceFreeShape(t, i, shape, rounds) {
			return
		}
	}
}

// raceFreeShape runs TestLF4_RealGoroutinesRaceFree's workers on one
// registry shape; it reports whether every answer was the reference's.
func raceFreeShape(t *testing.T, shapeIndex int, shape lf4Shape, rounds int) bool {
	t.Helper()
	const workers = 6
	r := racefree.Preempting(rt.Real()) // read holds yield inside, so two overlap even on one processor
	spans, logs, otel, err := shape.install(r)
	if err != nil {
		t.Fatal(err)
	}
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
				wantLogs, wantOtel := shape.want(tc, target, l)
				gotLogs, gotOtel := byTarget[i].logs.Enabled(tc.ctx, l), byTarget[i].otel.Enabled(tc.ctx, l)
				n++
				if gotLogs != wantLogs || gotOtel != wantOtel {
					return n, fmt.Errorf("LF-4 on real goroutines (%s): an event at %v from %q %s: logs %v (want %v), telemetry %v (want %v)",
						shape, l, target, tc.names(), gotLogs, wantLogs, gotOtel, wantOtel)
				}
			}
		}
		return n, nil
	}
	enter := func(tc *taskCtx, sp *lf4Span) {
		tc.ctx = sp.sp.Enter(tc.ctx)
		live := !sp.closed
		tc.stack = append(tc.stack, frame{span: sp, live: live, scoped: live && shape.selects(sp)})
	}
	worker := func(w int) error {
		// The worker's own exit orders: drawn from a generator of its
		// own, seeded by the shape and the worker, so every run is the
		// same program.
		rng := rand.New(rand.NewPCG(uint64(shapeIndex), uint64(w)))
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
					enter(tc, shared)
					r.Yield()
				}
				enter(tc, sp)
				r.Yield()
				n, err := judge(tc)
				judged[w] += n
				if err != nil {
					return err
				}
			}
			// Exit in a drawn order: any open span, an outer one too,
			// which leaves the spans entered within it (taskCtx.exited).
			for len(tc.stack) > 0 {
				f := tc.stack[rng.IntN(len(tc.stack))]
				tc.ctx = f.span.sp.Exit(tc.ctx)
				tc.exited(f.span)
				r.Yield()
				n, err := judge(tc)
				judged[w] += n
				if err != nil {
					return err
				}
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
	racefree.Concurrently(t, r, racefree.Workers("worker", workers, worker)...)
	if t.Failed() {
		return false
	}
	// Every span closed: entering one again enables nothing. A registry
	// that kept one lost a removal, or a registration that raced one.
	total, reentered := 0, 0
	for w := range workers {
		total += judged[w]
		for _, sp := range closed[w] {
			tc := &taskCtx{}
			tc.ctx = context.Background()
			enter(tc, sp)
			n, err := judge(tc)
			total += n
			reentered++
			if err != nil {
				t.Error(err)
				return false
			}
		}
	}
	shared.sp.Close()
	t.Logf("LF-4 on real goroutines, %s: %d workers, %d rounds each, %d closed spans entered again after; %d answers of each filter judged", shape, workers, rounds, reentered, total)
	return true
}

// discard is an io.Writer that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

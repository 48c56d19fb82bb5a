package logfilter_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// install builds the relay's arrangement: two filters (logs and telemetry)
// over one span registry, one logger on both.
func install(t tb, r rt.Runtime, logsList, otelList string, kind logfilter.Kind) (*logfilter.Spans, *slog.Logger) {
	t.Helper()
	logs := mustNew(t, r, logsList, kind)
	otel := mustNew(t, r, otelList, kind)
	spans := logfilter.NewSpans(logs, otel)
	lh, err := spans.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), logs)
	require.NoError(t, err)
	oh, err := spans.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), otel)
	require.NoError(t, err)
	return spans, slog.New(slog.NewMultiHandler(lh, oh)).With(logfilter.Target("buzz_relay::conn"))
}

// lockCounts runs enter, log, exit for a span and returns the lock
// acquisitions each step took.
type lockCounts struct{ enterR, enterW, logR, logW, exitR, exitW int64 }

func measure(c *countingRT, span *logfilter.Span, logger *slog.Logger) lockCounts {
	var m lockCounts
	r0, w0 := c.counts()
	ctx := span.Enter(context.Background())
	r1, w1 := c.counts()
	logger.DebugContext(ctx, "filtered out or not")
	logger.Log(ctx, logfilter.LevelTrace, "filtered out")
	r2, w2 := c.counts()
	span.Exit(ctx)
	r3, w3 := c.counts()
	m.enterR, m.enterW = r1-r0, w1-w0
	m.logR, m.logW = r2-r1, w2-w1
	m.exitR, m.exitW = r3-r2, w3-w2
	return m
}

// LF-5: with two filters installed, entering and exiting a span takes no lock
// on the target path. It takes one read lock per filter (2) on each enter and
// each exit on the span-aware path, whether or not the list names a span.
// Logging an event takes no lock on either path.
func TestLF5LockAcquisitions(t *testing.T) {
	for _, c := range []struct {
		name        string
		logs, otel  string
		kind        logfilter.Kind
		wantPerStep int64
	}{
		{name: "target path", logs: "info,buzz_relay=debug", otel: "warn", kind: logfilter.KindTargets, wantPerStep: 0},
		{name: "span-aware path, span directives", logs: "info,[conn]=debug", otel: "warn,[request]=trace", kind: logfilter.KindSpanAware, wantPerStep: 2},
		{name: "span-aware path, empty level", logs: "info,buzz_relay=", otel: "warn,other=", kind: logfilter.KindSpanAware, wantPerStep: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			cr := &countingRT{Runtime: rt.Real()}
			spans, logger := install(t, cr, c.logs, c.otel, c.kind)
			conn := spans.Start("buzz_relay", "conn")
			other := spans.Start("buzz_relay", "unmatched")
			for i := range 3 {
				for _, sp := range []*logfilter.Span{conn, other} {
					m := measure(cr, sp, logger)
					assert.Equal(t, lockCounts{enterR: c.wantPerStep, exitR: c.wantPerStep}, m, "span %s, round %d", sp.Name(), i)
				}
			}
			conn.Close()
			other.Close()
			if c.kind == logfilter.KindTargets {
				r, w := cr.counts()
				assert.Zero(t, r+w, "the target path never locks")
				assert.Zero(t, cr.mutexes.Load(), "the target path does not even own a lock")
			}
		})
	}
}

// The count is per span-aware filter. A span-aware filter from a plain list
// (forced) costs the same 2 per enter as one with span directives: the waste
// the source text removes. One span-aware filter next to a target table costs
// 1.
func TestLF5PerFilter(t *testing.T) {
	cr := &countingRT{Runtime: rt.Real()}
	a, err := logfilter.NewSpanAware(cr, "info,buzz_relay=debug")
	require.NoError(t, err)
	b, err := logfilter.NewSpanAware(cr, "warn")
	require.NoError(t, err)
	tbl := mustNew(t, cr, "warn", logfilter.KindTargets)

	for _, c := range []struct {
		filters []*logfilter.Filter
		want    int64
	}{
		{[]*logfilter.Filter{a, b}, 2},
		{[]*logfilter.Filter{a, tbl}, 1},
		{[]*logfilter.Filter{a, a}, 1}, // installed once
		{[]*logfilter.Filter{tbl}, 0},
		{nil, 0},
	} {
		spans := logfilter.NewSpans(c.filters...)
		sp := spans.Start("buzz_relay", "conn")
		// Nested enters: each costs the same.
		r0, _ := cr.counts()
		ctx := sp.Enter(context.Background())
		inner := spans.Start("buzz_relay", "poll")
		ctx2 := inner.Enter(ctx)
		r1, _ := cr.counts()
		inner.Exit(ctx2)
		sp.Exit(ctx)
		r2, _ := cr.counts()
		assert.Equal(t, 2*c.want, r1-r0, "%d filters: two enters", len(c.filters))
		assert.Equal(t, 2*c.want, r2-r1, "%d filters: two exits", len(c.filters))
	}
}

// LF-5 under the simulator: tasks interleave at every lock the span-aware
// path takes. Each lock is a scheduling point, so one task's count can
// include others' locks; the totals are exact. Over the whole run, read locks
// are exactly 2 per enter plus 2 per exit on the span-aware path and 0 on the
// target path, and logging adds none.
func TestLF5Simulated(t *testing.T) {
	const tasks, rounds = 4, 10
	for _, c := range []struct {
		logs, otel string
		kind       logfilter.Kind
		want       int64
	}{
		{"info,buzz_relay=debug", "warn", logfilter.KindTargets, 0},
		{"info,[conn]=debug", "warn,[poll]=trace", logfilter.KindSpanAware, 2},
	} {
		for seed := uint64(1); seed <= 10; seed++ {
			var rlocks, locks, enters, exits int64
			res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
				cr := &countingRT{Runtime: s}
				spans, logger := install(simTB{s}, cr, c.logs, c.otel, c.kind)
				wg := s.NewWaitGroup("tasks")
				for w := range tasks {
					wg.Add(1)
					s.Go(fmt.Sprintf("task-%d", w), func() {
						defer wg.Done()
						conn := spans.Start("buzz_relay", "conn")
						defer conn.Close()
						for range rounds {
							ctx := conn.Enter(context.Background())
							enters++
							logger.Log(ctx, logfilter.LevelTrace, "filtered out")
							logger.Debug("outside")
							conn.Exit(ctx)
							exits++
						}
					})
				}
				_ = wg.Wait(context.Background())
				rlocks, locks = cr.counts()
			})
			require.NoError(t, res.Err, "seed %d", seed)
			require.Equal(t, int64(tasks*rounds), enters)
			assert.Equal(t, c.want*(enters+exits), rlocks, "%v seed %d: read locks", c.kind, seed)
			if c.kind == logfilter.KindTargets {
				assert.Zero(t, locks, "seed %d: write locks on the target path", seed)
			} else {
				// The logs filter matches each conn span: one write lock to
				// register it, one to close it; telemetry's [poll] does not
				// match, but closing still takes its write lock.
				assert.Equal(t, int64(tasks*3), locks, "seed %d: write locks", seed)
			}
		}
	}
}

// simTB adapts a simulation to the helpers' tb.
type simTB struct{ s *sim.Sim }

func (simTB) Helper()                             {}
func (t simTB) Errorf(format string, args ...any) { t.s.Failf(format, args...) }
func (t simTB) FailNow()                          { t.s.Failf("FailNow") }

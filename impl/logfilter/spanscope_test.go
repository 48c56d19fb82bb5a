package logfilter_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// LF-4: [conn]=debug enables debug events inside a conn span and inside
// the spans entered within it, and nowhere else.
func TestLF4SpanScope(t *testing.T) {
	f := mustNew(t, rt.Real(), "warn,[conn]=debug", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(f)
	var buf bytes.Buffer
	h, err := spans.Handler(logfiltertest.TextHandler(&buf), f)
	require.NoError(t, err)
	logger := slog.New(h).With(logfilter.Target("buzz_relay::conn"))
	other := slog.New(h).With(logfilter.Target("unrelated"))

	conn := spans.Start("buzz_relay", "conn", slog.String("peer", "a"))
	defer conn.Close()
	req := spans.Start("buzz_relay", "request")
	defer req.Close()
	lookalike := spans.Start("buzz_relay", "connection")
	defer lookalike.Close()

	ctx := context.Background()
	is := func(ctx context.Context, want bool, where string) {
		t.Helper()
		assert.Equal(t, want, logger.Enabled(ctx, slog.LevelDebug), "debug %s", where)
		assert.Equal(t, want, other.Enabled(ctx, slog.LevelDebug), "debug of another target %s", where)
		assert.False(t, logger.Enabled(ctx, logfilter.LevelTrace), "trace %s", where)
		assert.True(t, logger.Enabled(ctx, slog.LevelWarn), "warn %s", where)
		assert.Equal(t, want, logger.Enabled(ctx, slog.LevelInfo), "info %s", where)
	}
	is(ctx, false, "outside every span")
	is(req.Enter(ctx), false, "inside a request span alone")
	is(lookalike.Enter(ctx), false, "inside a span whose name only starts with conn")

	inConn := conn.Enter(ctx)
	is(inConn, true, "inside conn")
	inReq := req.Enter(inConn)
	is(inReq, true, "inside request nested in conn")
	deeper := lookalike.Enter(inReq)
	is(deeper, true, "two levels below conn")
	derived, cancel := context.WithCancel(deeper)
	is(derived, true, "in a context derived inside conn")
	cancel()

	back := lookalike.Exit(deeper)
	back = req.Exit(back)
	assert.Equal(t, inConn, back, "Exit returns the context from before Enter")
	is(back, true, "back in conn")
	after := conn.Exit(back)
	assert.Equal(t, ctx, after)
	is(after, false, "after exiting conn")

	// Exiting an outer span exits the inner ones with it.
	assert.Equal(t, ctx, conn.Exit(req.Enter(conn.Enter(ctx))))
	// Exiting a span that is not entered changes nothing.
	assert.Equal(t, inConn, req.Exit(inConn))

	// What reaches the wrapped handler is what Enabled said.
	logger.DebugContext(inReq, "in")
	logger.DebugContext(ctx, "out")
	logger.Handler().Handle(ctx, slog.NewRecord(testTime, slog.LevelDebug, "direct out", 0))
	logger.Handler().Handle(inConn, slog.NewRecord(testTime, slog.LevelDebug, "direct in", 0))
	out := buf.String()
	assert.Equal(t, 1, lines(out, "msg=in"), out)
	assert.Equal(t, 1, lines(out, `msg="direct in"`), out)
	assert.Zero(t, lines(out, "msg=out"), out)
	assert.Zero(t, lines(out, `msg="direct out"`), out)
}

// A span nested in a conn span keeps conn's level even when its own
// directive enables less: levels of enclosing spans combine, the most
// verbose wins (as EnvFilter's scope stack does).
func TestLF4NestedLevelsCombine(t *testing.T) {
	f := mustNew(t, rt.Real(), "[conn]=debug,[quiet]=error,[loud]=trace", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(f)
	conn, quiet, loud := spans.Start("", "conn"), spans.Start("", "quiet"), spans.Start("", "loud")
	bg := context.Background()
	inQuiet := quiet.Enter(bg)
	assert.False(t, enabledIn(t, spans, f, inQuiet, "", slog.LevelWarn), "quiet alone: error only")
	nested := quiet.Enter(conn.Enter(bg))
	assert.True(t, enabledIn(t, spans, f, nested, "", slog.LevelDebug), "quiet inside conn: conn's debug still holds")
	assert.False(t, enabledIn(t, spans, f, nested, "", logfilter.LevelTrace))
	deeper := loud.Enter(nested)
	assert.True(t, enabledIn(t, spans, f, deeper, "", logfilter.LevelTrace), "loud inside: trace")
	back := loud.Exit(deeper)
	assert.False(t, enabledIn(t, spans, f, back, "", logfilter.LevelTrace), "after loud: debug again")
	assert.True(t, enabledIn(t, spans, f, back, "", slog.LevelDebug))
	assert.False(t, enabledIn(t, spans, f, quiet.Exit(inQuiet), "", slog.LevelError), "no span, no static directive: nothing")
}

// Span directives with a target and fields select spans by the span's
// target (segment rule) and field values; the most verbose match wins.
func TestLF4TargetAndFieldDirectives(t *testing.T) {
	f := mustNew(t, rt.Real(), "error,buzz_relay[conn]=info,[{peer=a}]=debug,[conn{shard=3}]=trace,[conn{peer=z}]=off", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(f)
	for _, c := range []struct {
		target, name string
		fields       []slog.Attr
		want         slog.Level // the most verbose level enabled inside; LevelOff: nothing beyond statics
	}{
		{"buzz_relay", "conn", nil, slog.LevelInfo},
		{"buzz_relay::net", "conn", nil, slog.LevelInfo},
		{"buzz_relayer", "conn", nil, logfilter.LevelOff},
		{"x", "request", []slog.Attr{slog.String("peer", "a")}, slog.LevelDebug},
		{"x", "request", []slog.Attr{slog.String("peer", "b")}, logfilter.LevelOff},
		{"buzz_relay", "conn", []slog.Attr{slog.String("peer", "a")}, slog.LevelDebug},
		{"x", "conn", []slog.Attr{slog.Int("shard", 3)}, logfilter.LevelTrace},
		{"x", "conn", []slog.Attr{slog.Int("shard", 4)}, logfilter.LevelOff},
		{"x", "conn", []slog.Attr{slog.String("peer", "z")}, logfilter.LevelOff},
		{"x", "conn", []slog.Attr{slog.Group("g", slog.Int("shard", 3))}, logfilter.LevelOff},
	} {
		sp := spans.Start(c.target, c.name, c.fields...)
		ctx := sp.Enter(context.Background())
		for _, l := range logfiltertest.EventLevels {
			want := l >= slog.LevelError || (c.want != logfilter.LevelOff && l >= c.want)
			assert.Equal(t, want, enabledIn(t, spans, f, ctx, "any", l), "span %s %s %v, event at %v", c.target, c.name, c.fields, l)
		}
		sp.Close()
	}
}

func TestLF4Close(t *testing.T) {
	f := mustNew(t, rt.Real(), "[conn]=debug", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(f)
	conn := spans.Start("", "conn")
	_ = spans.Start("", "unmatched") // not registered: nothing to remember
	assert.Equal(t, 1, logfilter.SpanCount(f))
	inside := conn.Enter(context.Background())
	conn.Close()
	conn.Close()
	assert.Equal(t, 0, logfilter.SpanCount(f))
	assert.True(t, enabledIn(t, spans, f, inside, "", slog.LevelDebug), "a context entered before Close keeps what it had")
	assert.False(t, enabledIn(t, spans, f, conn.Enter(context.Background()), "", slog.LevelDebug), "entering a closed span enables nothing")
}

// A span entered in a context covers the goroutines started with that
// context, and only them. Under rt.Real(), 8 goroutines each create, enter,
// nest, exit and close their own spans while others log outside spans. Every
// event's fate is what its context says. Run with -race.
func TestLF4RealGoroutines(t *testing.T) {
	logs := mustNew(t, rt.Real(), "warn,[conn]=debug", logfilter.KindSpanAware)
	otel := mustNew(t, rt.Real(), "error,[request]=trace", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(logs, otel)
	var logBuf, otelBuf bytes.Buffer
	lh, err := spans.Handler(logfiltertest.TextHandler(&logBuf), logs)
	require.NoError(t, err)
	oh, err := spans.Handler(logfiltertest.TextHandler(&otelBuf), otel)
	require.NoError(t, err)
	base := slog.New(slog.NewMultiHandler(lh, oh))

	const workers, rounds = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logger := base.With(logfilter.Target(fmt.Sprintf("buzz_relay::w%d", w)), "w", w)
			for i := range rounds {
				ctx := context.Background()
				conn := spans.Start("buzz_relay", "conn", slog.Int("i", i))
				req := spans.Start("buzz_relay", "request")
				inConn := conn.Enter(ctx)
				inReq := req.Enter(inConn)
				logger.DebugContext(ctx, "outside")
				logger.DebugContext(inConn, "conn")
				logger.Log(inReq, logfilter.LevelTrace, "conn/request")
				logger.DebugContext(inReq, "conn/request")
				if !logger.Enabled(inConn, slog.LevelDebug) || logger.Enabled(ctx, slog.LevelDebug) {
					errs <- fmt.Errorf("worker %d round %d: debug enabled outside conn or not inside", w, i)
					return
				}
				if got := conn.Exit(req.Exit(inReq)); got != ctx {
					errs <- fmt.Errorf("worker %d round %d: exits did not return the outer context", w, i)
					return
				}
				req.Close()
				conn.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Zero(t, logfilter.SpanCount(logs))
	assert.Zero(t, logfilter.SpanCount(otel))

	// logs: debug inside conn (conn, and conn/request once at debug); never
	// outside, never trace.
	lo, oo := logBuf.String(), otelBuf.String()
	assert.Equal(t, workers*rounds*2, lines(lo, "level=DEBUG"), "logs: debug events inside conn")
	assert.Zero(t, lines(lo, "msg=outside"), "logs: no debug outside conn")
	assert.Zero(t, lines(lo, "level=DEBUG-4"), "logs: no trace")
	// otel: both events inside request (trace and debug), nothing else.
	assert.Equal(t, workers*rounds*2, lines(oo, "msg=conn/request"), "otel: events inside request")
	assert.Zero(t, lines(oo, "msg=conn "), "otel: not in conn alone")
	assert.Zero(t, lines(oo, "msg=outside"))

	// A goroutine started inside a span logs inside it.
	conn := spans.Start("", "conn")
	defer conn.Close()
	inConn := conn.Enter(context.Background())
	done := make(chan bool)
	go func() { done <- lh.Enabled(inConn, slog.LevelDebug) }()
	assert.True(t, <-done)
}

// LF-4 under the simulator: tasks interleave their span enters, exits,
// creations and closes at every lock (the scheduler may switch at each),
// and each event's fate still depends only on its own context.
func TestLF4Simulated(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			f, err := logfilter.New(s, "warn,[conn]=debug")
			if err != nil || f.Kind() != logfilter.KindSpanAware {
				s.Failf("New: %v %v", f, err)
				return
			}
			spans := logfilter.NewSpans(f)
			h, err := spans.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), f)
			if err != nil {
				s.Failf("%v", err)
				return
			}
			wg := s.NewWaitGroup("tasks")
			for w := range 4 {
				wg.Add(1)
				s.Go(fmt.Sprintf("task-%d", w), func() {
					defer wg.Done()
					for i := range 20 {
						ctx := context.Background()
						conn := spans.Start("", "conn")
						req := spans.Start("", "request")
						inConn := conn.Enter(ctx)
						s.Yield()
						inReq := req.Enter(inConn)
						alone := req.Enter(ctx)
						if !h.Enabled(inConn, slog.LevelDebug) || !h.Enabled(inReq, slog.LevelDebug) ||
							h.Enabled(ctx, slog.LevelDebug) || h.Enabled(alone, slog.LevelDebug) ||
							h.Enabled(inReq, logfilter.LevelTrace) {
							s.Failf("task %d round %d: wrong scope", w, i)
						}
						_ = req.Exit(alone)
						s.Yield()
						_ = conn.Exit(req.Exit(inReq))
						req.Close()
						conn.Close()
					}
				})
			}
			_ = wg.Wait(context.Background())
			if n := logfilter.SpanCount(f); n != 0 {
				s.Failf("%d spans left registered", n)
			}
		})
		require.NoError(t, res.Err, "seed %d", seed)
	}
}

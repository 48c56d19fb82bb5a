package logfilter_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func TestHandlerTarget(t *testing.T) {
	for _, kind := range []logfilter.Kind{logfilter.KindTargets, logfilter.KindSpanAware} {
		var f *logfilter.Filter
		var err error
		if kind == logfilter.KindTargets {
			f, err = logfilter.NewTargets("warn,buzz_relay=debug")
		} else {
			f, err = logfilter.NewSpanAware(rt.Real(), "warn,buzz_relay=debug")
		}
		require.NoError(t, err)
		var buf bytes.Buffer
		_, h := handlerFor(t, f, &buf)
		logger := slog.New(h)
		ctx := context.Background()

		assert.False(t, logger.Enabled(ctx, slog.LevelDebug), "%v: no target: the bare level", kind)
		relay := logger.With(logfilter.Target("buzz_relay::conn"))
		assert.True(t, relay.Enabled(ctx, slog.LevelDebug), "%v: target from With", kind)
		assert.False(t, relay.With(logfilter.Target("other")).Enabled(ctx, slog.LevelDebug), "%v: the last target wins", kind)
		assert.True(t, logger.With("target", "buzz_relay").Enabled(ctx, slog.LevelDebug), "%v: a plain \"target\" key", kind)
		assert.True(t, logger.With(slog.Any("target", stringer("buzz_relay"))).Enabled(ctx, slog.LevelDebug), "%v: any value, by its text", kind)
		grouped := relay.WithGroup("g").With(logfilter.Target("other"))
		assert.True(t, grouped.Enabled(ctx, slog.LevelDebug), "%v: a target inside a group is an ordinary attribute", kind)
		assert.Same(t, h, h.WithGroup(""), "an empty group is no group")
		assert.Same(t, h, h.WithAttrs(nil))

		relay.Debug("kept", "k", 1)
		logger.Debug("dropped", "target", "buzz_relay") // a record attribute does not set the target
		grouped.Debug("grouped")
		assert.Equal(t, "level=DEBUG msg=kept target=buzz_relay::conn k=1\nlevel=DEBUG msg=grouped target=buzz_relay::conn g.target=other\n", buf.String(), "%v", kind)
		assert.Equal(t, f, h.Filter())
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// Enabled also asks the wrapped handler: a filter cannot enable what the
// next handler drops.
func TestHandlerAsksNext(t *testing.T) {
	f := mustNew(t, rt.Real(), "trace", logfilter.KindTargets)
	spans := logfilter.NewSpans(f)
	h, err := spans.Handler(slog.NewTextHandler(new(bytes.Buffer), &slog.HandlerOptions{Level: slog.LevelWarn}), f)
	require.NoError(t, err)
	assert.False(t, h.Enabled(context.Background(), slog.LevelInfo))
	assert.True(t, h.Enabled(context.Background(), slog.LevelWarn))
}

func TestSpansHandlerErrors(t *testing.T) {
	a := mustNew(t, rt.Real(), "info", logfilter.KindTargets)
	b := mustNew(t, rt.Real(), "[conn]=debug", logfilter.KindSpanAware)
	spans := logfilter.NewSpans(a, nil)
	_, err := spans.Handler(slog.DiscardHandler, b)
	assert.ErrorIs(t, err, logfilter.ErrNotInstalled)
	_, err = spans.Handler(slog.DiscardHandler, nil)
	assert.ErrorIs(t, err, logfilter.ErrNotInstalled)
	_, err = spans.Handler(nil, a)
	assert.Error(t, err)
}

// Two registries keep their spans apart, even in one context; nil
// contexts and nil spans do not panic.
func TestSpansIndependentAndNilSafe(t *testing.T) {
	f := mustNew(t, rt.Real(), "[conn]=debug", logfilter.KindSpanAware)
	one, two := logfilter.NewSpans(f), logfilter.NewSpans(f)
	ctx := one.Start("", "conn").Enter(context.Background())
	assert.True(t, enabledIn(t, one, f, ctx, "", slog.LevelDebug))
	assert.False(t, enabledIn(t, two, f, ctx, "", slog.LevelDebug))

	var nilSpan *logfilter.Span
	bg := context.Background()
	assert.Equal(t, bg, nilSpan.Enter(bg))
	assert.Equal(t, bg, nilSpan.Exit(bg))
	nilSpan.Close()
	sp := one.Start("", "conn")
	var nilCtx context.Context // a nil context must not panic
	inside := sp.Enter(nilCtx)
	assert.True(t, enabledIn(t, one, f, inside, "", slog.LevelDebug))
	assert.NotNil(t, sp.Exit(nilCtx))
	h, err := one.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), f)
	require.NoError(t, err)
	assert.False(t, h.Enabled(nilCtx, slog.LevelDebug))
	assert.NoError(t, h.Handle(nilCtx, slog.NewRecord(testTime, slog.LevelDebug, "x", 0)))
	assert.Equal(t, "conn", sp.Name())
	assert.Equal(t, "", sp.Target())
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "targets", logfilter.KindTargets.String())
	assert.Equal(t, "span-aware", logfilter.KindSpanAware.String())
	assert.Equal(t, "invalid", logfilter.Kind(0).String())
}

func TestFilterDirectivesIsACopy(t *testing.T) {
	f := mustNew(t, rt.Real(), "[conn{peer=a}]=debug", logfilter.KindSpanAware)
	ds := f.Directives()
	ds[0].Fields[0].Value = "changed"
	ds[0].Span = "changed"
	assert.Equal(t, "[conn{peer=a}]=debug", f.String())
}

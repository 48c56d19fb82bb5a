package logfilter_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// LF-3: an empty level means every level (TRACE) on the span-aware filter
// and ERROR in the target table's own parser; so such a list is not plain
// and New never gives it to the target table.
func TestLF3EmptyLevel(t *testing.T) {
	ctx := context.Background()
	for _, list := range []string{"buzz_relay=", " buzz_relay= ", "warn,buzz_relay=", "buzz_relay=,,"} {
		aware, err := logfilter.NewSpanAware(rt.Real(), list)
		require.NoError(t, err)
		table, err := logfilter.NewTargets(list)
		require.NoError(t, err)

		// The two readings.
		assert.True(t, enabled(t, aware, ctx, "buzz_relay", logfilter.LevelTrace), "span-aware %q: TRACE", list)
		assert.True(t, enabled(t, aware, ctx, "buzz_relay::conn", logfilter.LevelTrace), "span-aware %q: TRACE below", list)
		assert.False(t, enabled(t, table, ctx, "buzz_relay", slog.LevelWarn), "target table %q: below ERROR is dropped", list)
		assert.True(t, enabled(t, table, ctx, "buzz_relay", slog.LevelError), "target table %q: ERROR", list)
		assert.Equal(t, "buzz_relay=error", table.Directives()[len(table.Directives())-1].String())

		// The router keeps the list span-aware, with the TRACE reading.
		assert.False(t, logfilter.IsPlain(list), "%q", list)
		routed := mustNew(t, rt.Real(), list, logfilter.KindSpanAware)
		assert.True(t, enabled(t, routed, ctx, "buzz_relay", logfilter.LevelTrace), "New(%q)", list)
		assert.True(t, enabled(t, routed, ctx, "buzz_relay", slog.LevelWarn), "New(%q)", list)
	}
}

// The other look-alikes of a plain list stay span-aware too: an empty
// target (read as a bare level) and a bare target (every level).
func TestLF3OtherLookalikes(t *testing.T) {
	ctx := context.Background()
	f := mustNew(t, rt.Real(), "=debug", logfilter.KindSpanAware)
	assert.Equal(t, "debug", f.String())
	assert.True(t, enabled(t, f, ctx, "anything", slog.LevelDebug))
	assert.False(t, enabled(t, f, ctx, "anything", logfilter.LevelTrace))
	_, err := logfilter.NewTargets("=debug")
	assert.ErrorIs(t, err, logfilter.ErrBadTarget, "the table's parser rejects an empty target")

	f = mustNew(t, rt.Real(), "warn,buzz_relay", logfilter.KindSpanAware)
	assert.True(t, enabled(t, f, ctx, "buzz_relay::conn", logfilter.LevelTrace))
	assert.False(t, enabled(t, f, ctx, "buzz_relayer", slog.LevelInfo))
}

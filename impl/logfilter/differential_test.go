package logfilter_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// LF-2: for every plain list, the target table logs exactly what the
// span-aware filter built from the same list logs, event for event, inside
// and outside spans; and New's filter is the target table.
func TestLF2DifferentialFixed(t *testing.T) {
	n := 0
	for _, list := range logfiltertest.PlainLists {
		require.True(t, logfilter.IsPlain(list), "%q", list)
		n++
		table, err := logfilter.NewTargets(list)
		require.NoError(t, err)
		aware, err := logfilter.NewSpanAware(rt.Real(), list)
		require.NoError(t, err)
		routed := mustNew(t, rt.Real(), list, logfilter.KindTargets)

		want := workload(t, aware)
		got := workload(t, table)
		require.Equal(t, want, got, "list %q: the target table differs from the span-aware filter at %s", list, logfiltertest.FirstDiff(want, got))
		require.Equal(t, want, workload(t, routed), "list %q", list)
	}
	require.GreaterOrEqual(t, n, 17, "LF-2 needs at least 17 fixed plain lists")
}

// The differential is only as good as the workload: these directed cases
// pin down what both paths must log, so that a fault shared by both (the
// segment-boundary rule, the level comparison) fails too.
func TestLF2DirectedExpectations(t *testing.T) {
	type ev struct {
		target string
		level  slog.Level
		want   bool
	}
	for _, c := range []struct {
		list string
		evs  []ev
	}{
		{"warn,buzz_relay=debug", []ev{
			{"buzz_relay", slog.LevelDebug, true},
			{"buzz_relay", slog.LevelDebug - 1, false},
			{"buzz_relay::conn", slog.LevelDebug, true},
			{"buzz_relay::conn::tls", slog.LevelDebug, true},
			{"buzz_relayer", slog.LevelDebug, false}, // prefix lookalike: not covered
			{"buzz_relayer", slog.LevelWarn, true},
			{"buzz_relayer", slog.LevelWarn - 1, false},
			{"", slog.LevelWarn, true},
			{"", slog.LevelInfo, false},
		}},
		{"buzz=trace", []ev{
			{"buzz", logfilter.LevelTrace, true},
			{"buzz", logfilter.LevelTrace - 1, false},
			{"buzz_relay", slog.LevelError, false}, // no bare level: nothing else passes
		}},
		{"info,buzz_relay=off,buzz_relay::conn::tls=trace", []ev{
			{"buzz_relay", slog.LevelError + 100, false},
			{"buzz_relay::conn", slog.LevelError, false},
			{"buzz_relay::conn::tls", logfilter.LevelTrace, true},
			{"buzz_relay::conn::tlsx", logfilter.LevelTrace, false},
			{"buzz_relayer", slog.LevelInfo, true},
		}},
		{"buzz_relay=debug,buzz_relay=error", []ev{ // the last directive wins
			{"buzz_relay", slog.LevelWarn, false},
			{"buzz_relay", slog.LevelError, true},
		}},
		{"", []ev{{"", slog.LevelError + 100, false}, {"buzz_relay", slog.LevelError, false}}},
		{"off", []ev{{"", logfilter.LevelOff, false}}},
	} {
		require.True(t, logfilter.IsPlain(c.list))
		table, err := logfilter.NewTargets(c.list)
		require.NoError(t, err)
		aware, err := logfilter.NewSpanAware(rt.Real(), c.list)
		require.NoError(t, err)
		for _, e := range c.evs {
			assert.Equal(t, e.want, enabled(t, table, context.Background(), e.target, e.level),
				"target table, list %q, %q at %v", c.list, e.target, e.level)
			assert.Equal(t, e.want, enabled(t, aware, context.Background(), e.target, e.level),
				"span-aware, list %q, %q at %v", c.list, e.target, e.level)
		}
	}
}

// LF-2 over generated plain lists: random levels (in random case) for
// targets drawn from the event targets, their parents and lookalikes, with
// whitespace and empty segments.
func TestLF2DifferentialRapid(t *testing.T) {
	targets := []string{"buzz_relay", "buzz_relay::conn", "buzz_relay::conn::tls", "buzz_relayer", "buzz", "other", "buzz_relay::con"}
	rapid.Check(t, func(t *rapid.T) {
		list := logfiltertest.PlainList(func(label string, n int) int { return rapid.IntRange(0, n-1).Draw(t, label) }, targets)
		if !logfilter.IsPlain(list) {
			t.Fatalf("generated list %q is not plain", list)
		}
		table, err := logfilter.New(rt.Real(), list)
		if err != nil || table.Kind() != logfilter.KindTargets {
			t.Fatalf("list %q: %v %v", list, table, err)
		}
		aware, err := logfilter.NewSpanAware(rt.Real(), list)
		if err != nil {
			t.Fatal(err)
		}
		if want, got := workload(t, aware), workload(t, table); want != got {
			t.Fatalf("list %q: target table differs from span-aware at %s", list, logfiltertest.FirstDiff(want, got))
		}
	})
}

// The segment-boundary rule on odd event targets (colons in any number,
// empty segments): the table's sorted scan and the span-aware filter's map
// walk must agree on every target, not only on well-formed ones.
func TestLF2OddTargetsRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom([]string{"a", "b", "ab"})
		var segs []string
		for range rapid.IntRange(0, 5).Draw(t, "rules") {
			parts := rapid.SliceOfN(word, 1, 3).Draw(t, "parts")
			segs = append(segs, strings.Join(parts, "::")+"="+rapid.SampledFrom([]string{"trace", "info", "error", "off"}).Draw(t, "level"))
		}
		if rapid.Bool().Draw(t, "global") {
			segs = append(segs, "warn")
		}
		list := strings.Join(segs, ",")
		table, err := logfilter.NewTargets(list)
		if err != nil {
			t.Fatal(err)
		}
		aware, err := logfilter.NewSpanAware(rt.Real(), list)
		if err != nil {
			t.Fatal(err)
		}
		target := rapid.StringOfN(rapid.SampledFrom([]rune("ab:_")), 0, 10, -1).Draw(t, "event target")
		for _, l := range logfiltertest.EventLevels {
			te := enabled(t, table, context.Background(), target, l)
			ae := enabled(t, aware, context.Background(), target, l)
			if te != ae {
				t.Fatalf("list %q, target %q, level %v: table %v, span-aware %v", list, target, l, te, ae)
			}
		}
	})
}

// LF-3 inside the differential: lists with an empty level are not plain;
// New keeps them span-aware, so New's filter logs what the span-aware
// filter logs, while the target table would log something else.
func TestLF2EmptyLevelLists(t *testing.T) {
	for _, list := range []string{
		" buzz_relay= ,",
		"buzz_relay=",
		"warn,buzz_relay::conn=",
		"buzz_relay=,buzz_relayer=info",
		"info, other= ",
	} {
		require.False(t, logfilter.IsPlain(list), "%q", list)
		routed := mustNew(t, rt.Real(), list, logfilter.KindSpanAware)
		aware, err := logfilter.NewSpanAware(rt.Real(), list)
		require.NoError(t, err)
		want := workload(t, aware)
		require.Equal(t, want, workload(t, routed), "list %q", list)

		table, err := logfilter.NewTargets(list)
		require.NoError(t, err, "%q", list)
		assert.NotEqual(t, want, workload(t, table), "list %q: the table reads the empty level differently", list)
	}
}

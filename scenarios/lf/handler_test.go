package lf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// handlerPaths are a list each path of New takes and passes every event
// of: the target table and the span-aware filter (a span directive no
// span of these tests matches).
var handlerPaths = map[string]string{"targets": "trace", "span-aware": "trace,[never]=off"}

// TestLF2_HandlerKeepsSlogsContract: a Handler that passes every event is
// invisible: what it hands on is what the wrapped handler would print,
// attributes, groups and all, as testing/slogtest holds any slog.Handler
// to. LF-2 compares captured output between the two paths; this holds
// both to slog's own account, on each path.
func TestLF2_HandlerKeepsSlogsContract(t *testing.T) {
	for _, path := range []string{"targets", "span-aware"} { // sorted: a fixed order
		t.Run(path, func(t *testing.T) {
			var buf bytes.Buffer
			slogtest.Run(t, func(t *testing.T) slog.Handler {
				buf.Reset()
				return handlerFor(t, handlerPaths[path], slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
			}, func(t *testing.T) map[string]any {
				var m map[string]any
				if line := bytes.TrimSpace(buf.Bytes()); len(line) > 0 {
					if err := json.Unmarshal(line, &m); err != nil {
						t.Fatalf("LF-2: the wrapped handler printed %q: %v", line, err)
					}
				}
				return m
			})
		})
	}
}

// TestLF2_HandlerFiltersWhatItDocuments holds the Handler to the rest of
// its documentation, on each path where it applies: Handle filters a
// record given to it directly, not only through Enabled; the target is
// the logger's last top-level TargetKey attribute, a group's is an
// ordinary attribute, and an empty group is no group; a nil context reads
// as no span.
func TestLF2_HandlerFiltersWhatItDocuments(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"targets", "span-aware"} {
		list := "info,buzz=debug"
		if path == "span-aware" {
			list += ",[never]=off"
		}
		var buf bytes.Buffer
		h := handlerFor(t, list, slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
		logged := func(what string, h slog.Handler, level slog.Level, want bool) {
			t.Helper()
			buf.Reset()
			r := slog.NewRecord(time.Time{}, level, what, 0)
			if err := h.Handle(ctx, r); err != nil {
				t.Fatalf("LF-2: %s: Handle: %v", path, err)
			}
			if got := buf.Len() > 0; got != want {
				t.Errorf("LF-2: %s, %q: %s at %v: logged %v, want %v (printed %q)", path, list, what, level, got, want, buf.String())
			}
		}
		logged("no target, debug, given to Handle directly", h, slog.LevelDebug, false)
		logged("no target, info", h, slog.LevelInfo, true)
		logged("target buzz, debug", h.WithAttrs([]slog.Attr{logfilter.Target("buzz")}), slog.LevelDebug, true)
		logged("target buzz then other, debug (the last one counts)", h.WithAttrs([]slog.Attr{logfilter.Target("buzz")}).WithAttrs([]slog.Attr{logfilter.Target("other")}), slog.LevelDebug, false)
		logged("target buzz inside a group, debug", h.WithGroup("g").WithAttrs([]slog.Attr{logfilter.Target("buzz")}), slog.LevelDebug, false)
		logged("target buzz after an empty group, debug", h.WithGroup("").WithAttrs([]slog.Attr{logfilter.Target("buzz")}), slog.LevelDebug, true)
		logged("target buzz, then no attributes, debug", h.WithAttrs([]slog.Attr{logfilter.Target("buzz")}).WithAttrs(nil), slog.LevelDebug, true)
		var noCtx context.Context // slog may hand a handler none
		if h.Enabled(noCtx, slog.LevelDebug) || !h.Enabled(noCtx, slog.LevelInfo) {
			t.Errorf("LF-2: %s, %q: Enabled with a nil context: debug %v, info %v; want false, true", path, list, h.Enabled(noCtx, slog.LevelDebug), h.Enabled(noCtx, slog.LevelInfo))
		}
	}
}

// TestLF4_SpansHandlerRefusesWhatItCannotServe: Spans.Handler refuses a
// nil next handler and a filter its registry does not hold (whose span
// directives would never see a span); a span-aware filter made with a nil
// runtime runs on the real one; Directives hands out a copy.
func TestLF4_SpansHandlerRefusesWhatItCannotServe(t *testing.T) {
	f, err := logfilter.New(nil, "info,[conn{peer=a}]=debug")
	if err != nil {
		t.Fatal(err)
	}
	other, err := logfilter.New(rt.Real(), "info")
	if err != nil {
		t.Fatal(err)
	}
	spans := logfilter.NewSpans(f)
	var buf bytes.Buffer
	next := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	if h, err := spans.Handler(nil, f); err == nil || h != nil {
		t.Errorf("LF-4: Handler(nil, f) = %v, %v; want an error", h, err)
	}
	for what, g := range map[string]*logfilter.Filter{"a nil filter": nil, "a filter of no registry": other} { //windtunnel:unordered independent cases
		if h, err := spans.Handler(next, g); !errors.Is(err, logfilter.ErrNotInstalled) || h != nil {
			t.Errorf("LF-4: Handler(next, %s) = %v, %v; want ErrNotInstalled", what, h, err)
		}
	}
	h, err := spans.Handler(next, f)
	if err != nil {
		t.Fatal(err)
	}
	// The nil runtime's filter takes its lock on enter: it must have one.
	sp := spans.Start("buzz", "conn", slog.String("peer", "a"))
	ctx := sp.Enter(context.Background())
	if !h.Enabled(ctx, slog.LevelDebug) || h.Enabled(context.Background(), slog.LevelDebug) {
		t.Errorf("LF-4: a filter made with a nil runtime: debug inside [conn{peer=a}] %v, outside %v; want true, false",
			h.Enabled(ctx, slog.LevelDebug), h.Enabled(context.Background(), slog.LevelDebug))
	}
	sp.Close()

	// NewSpans skips a nil filter and installs a filter given twice once:
	// one read lock per enter, not two. One dynamic directive is enough to
	// register a span, and a closed span enables nothing when entered again.
	c := newLockCounter(rt.Real())
	g, err := logfilter.NewSpanAware(c, "[conn]=debug")
	if err != nil {
		t.Fatal(err)
	}
	reg := logfilter.NewSpans(nil, g, nil, g)
	hg, err := reg.Handler(next, g)
	if err != nil {
		t.Fatalf("LF-4: a filter given after a nil one and twice: %v", err)
	}
	conn := reg.Start("buzz", "conn")
	var enter locks
	var inside context.Context
	c.do(&enter, func() { inside = conn.Enter(context.Background()) })
	if enter.R != 1 || enter.W != 0 {
		t.Errorf("LF-4: entering a span with the filter given twice took %v locks; want 1 read", enter)
	}
	if !hg.Enabled(inside, slog.LevelDebug) {
		t.Errorf("LF-4: [conn]=debug does not enable debug inside conn")
	}
	conn.Close()
	if hg.Enabled(conn.Enter(context.Background()), slog.LevelDebug) {
		t.Errorf("LF-4: [conn]=debug still enables debug inside conn after Close")
	}
	var noCtx context.Context // Enter and Exit take none as the background
	if in := conn.Enter(noCtx); in == nil || conn.Exit(in) == nil || conn.Exit(noCtx) == nil {
		t.Errorf("LF-4: Enter or Exit with a nil context returned none")
	}

	ds := f.Directives()
	for i := range ds {
		for j := range ds[i].Fields {
			ds[i].Fields[j].Value = "changed"
		}
	}
	if got := f.String(); strings.Contains(got, "changed") {
		t.Errorf("LF-4: changing the fields Directives returned changed the filter: %s", got)
	}
}

func handlerFor(t *testing.T, list string, next slog.Handler) *logfilter.Handler {
	t.Helper()
	f, err := logfilter.New(rt.Real(), list)
	if err != nil {
		t.Fatal(err)
	}
	h, err := logfilter.NewSpans(f).Handler(next, f)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

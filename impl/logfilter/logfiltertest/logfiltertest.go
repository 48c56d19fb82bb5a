// Package logfiltertest holds what the log filter's unit tests
// (impl/logfilter) and its claim checks (scenarios/lf) share. That is LF-2's
// fixed plain directive lists, its event targets and levels, and the workload
// that logs them inside and outside spans. It also has a first-difference
// helper for comparing two filters' captured output.
package logfiltertest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/windtunnel/windtunnel/impl/logfilter"
)

// PlainLists are the fixed plain lists of LF-2's differential (the source
// text's own test has 17): bare levels, targets with their nested targets
// and prefix lookalikes, off, repeated targets, any case, whitespace and
// empty segments. Every one names no span and no field, so the plain
// filter must log exactly what the span-aware one logs.
var PlainLists = []string{
	"",
	"info",
	"trace",
	"off",
	"warn,buzz_relay=debug",
	"buzz_relay=trace",
	"buzz_relay::conn=debug,buzz_relay=warn",
	"buzz_relayer=info,buzz_relay=error",
	"info,buzz_relay=off",
	"debug,buzz_relay::conn=off,buzz_relay::conn::tls=trace",
	"  warn , , buzz_relay::conn=DEBUG,, ",
	"INFO,Buzz_Relay=DEBUG",
	"buzz_relay=debug,buzz_relay=error",
	"error,info",
	"other=trace,buzz_relay::conn::tls=warn",
	"buzz=trace",
	"buzz_relay::conn::tls=debug,buzz_relay::conn=info,buzz_relay=warn,error",
	",,,",
	"Warn,buzz_relayer=TRACE,other=off",
	"info=debug,buzz_relay::conn=error",
	"buzz_relay::connection=trace,buzz_relay::conn=error",
	"buzz_relay::con=trace,buzz_relay::conn=warn",
	"off,buzz_relay::conn::tls=info,buzz_relay=debug",
	"trace,buzz_relay=off,buzz_relayer=off,other=off,buzz_relay::connection=info",
	"buzz_relay::conn::tls=off,trace",
	"b=trace,warn",
	"b::conn=error,b=debug",
}

// FirstDiff shows the first line where two captured outputs differ, or
// "identical".
func FirstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q vs %q", i+1, x, y)
		}
	}
	return "identical"
}

// TraceLevel is tracing's TRACE on slog's scale, one step of 4 below
// slog.LevelDebug, as impl/logfilter documents it; defined here rather
// than read from the package under test.
const TraceLevel = slog.LevelDebug - 4

// EventTargets are the event targets of LF-2's differential: a target, one
// nested in it and one nested twice. They include the prefix lookalikes of
// the first (buzz_relayer, and buzz_relay:conn, whose single colon is no
// segment boundary) and of the second (buzz_relay::connection). They also
// include an unrelated target, and one nested in a one-letter target
// (b::conn). A parent lookup that stops one character short of the start
// misses b. Two end in colons (buzz_relay: and buzz_relay::), where a
// lookup that reads one character past a "::" runs off the end.
var EventTargets = []string{
	"buzz_relay",
	"buzz_relay::conn",
	"buzz_relay::conn::tls",
	"buzz_relayer",
	"buzz_relay:conn",
	"buzz_relay::connection",
	"other",
	"b::conn",
	"buzz_relay:",
	"buzz_relay::",
}

// AllTargets are the event targets and "", a logger that sets no target.
var AllTargets = append(append([]string{}, EventTargets...), "")

// EventLevels are every level a directive can name, the levels just below
// and just above each (so that a comparison off by one shows), one far
// above, and the highest level there is, which only "off" drops.
var EventLevels = func() []slog.Level {
	var out []slog.Level
	for _, l := range []slog.Level{TraceLevel, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		out = append(out, l-1, l, l+1)
	}
	return append(out, slog.LevelError+20, slog.Level(math.MaxInt))
}()

// AllLevels lets a wrapped handler pass everything: only the filter
// decides what is written.
const AllLevels = slog.Level(-1 << 20)

// TextHandler writes records as text into buf, without the time, so that
// the outputs of two filters can be compared byte for byte.
func TextHandler(buf *bytes.Buffer) slog.Handler {
	return slog.NewTextHandler(buf, &slog.HandlerOptions{
		Level: AllLevels,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
}

// Workload logs an event at every event level from every target, and from a
// logger without one. It logs outside spans, inside a conn span, inside a
// request span nested in it, back in conn, after conn, inside a request span
// alone and after it. It logs through a handler of f in a registry of its
// own, and returns what the handler wrote and how many events it logged.
func Workload(f *logfilter.Filter) (string, int, error) {
	var buf bytes.Buffer
	spans := logfilter.NewSpans(f)
	h, err := spans.Handler(TextHandler(&buf), f)
	if err != nil {
		return "", 0, err
	}
	base := slog.New(h)
	conn := spans.Start("buzz_relay::conn", "conn", slog.String("peer", "a"))
	defer conn.Close()
	req := spans.Start("other", "request", slog.Int("id", 7))
	defer req.Close()
	events := 0
	logAll := func(ctx context.Context, where string) {
		for _, target := range AllTargets {
			logger := base
			if target != "" {
				logger = base.With(logfilter.Target(target))
			}
			for _, l := range EventLevels {
				logger.Log(ctx, l, "event", "where", where)
				events++
			}
		}
	}
	ctx := context.Background()
	logAll(ctx, "outside")
	inConn := conn.Enter(ctx)
	logAll(inConn, "conn")
	inReq := req.Enter(inConn)
	logAll(inReq, "conn/request")
	inConn = req.Exit(inReq)
	logAll(inConn, "conn after request")
	ctx = conn.Exit(inConn)
	logAll(ctx, "after conn")
	alone := req.Enter(ctx)
	logAll(alone, "request")
	logAll(req.Exit(alone), "after request")
	return buf.String(), events, nil
}

// Draw is how a generator draws: a number in [0, n), under a label (a
// rapid.T's IntRange(0, n-1).Draw in the tests; impl/ does not import
// rapid).
type Draw func(label string, n int) int

// PlainList draws a plain directive list for LF-2's generated
// differential: up to 8 segments, each a bare level, an empty segment or
// target=level over targets, levels in any case, some padded with
// whitespace.
func PlainList(draw Draw, targets []string) string {
	levels := []string{"trace", "debug", "info", "warn", "error", "off"}
	segs := make([]string, draw("segments", 9))
	for i := range segs {
		lv := levels[draw("level", len(levels))]
		if draw("upper", 2) == 1 {
			lv = strings.ToUpper(lv)
		}
		switch draw("shape", 6) {
		case 0:
			segs[i] = lv
		case 1:
			segs[i] = "" // an empty segment
		default:
			segs[i] = targets[draw("target", len(targets))] + "=" + lv
		}
		if draw("pad", 2) == 1 {
			segs[i] = " " + segs[i] + "\t"
		}
	}
	return strings.Join(segs, ",")
}

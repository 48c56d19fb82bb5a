package logfilter_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// tb is what the helpers need of a *testing.T, *testing.B or *rapid.T.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// handlerFor builds a one-filter registry and its handler into buf.
func handlerFor(t tb, f *logfilter.Filter, buf *bytes.Buffer) (*logfilter.Spans, *logfilter.Handler) {
	t.Helper()
	spans := logfilter.NewSpans(f)
	h, err := spans.Handler(logfiltertest.TextHandler(buf), f)
	require.NoError(t, err)
	return spans, h
}

// workload is logfiltertest.Workload's output for f.
func workload(t tb, f *logfilter.Filter) string {
	t.Helper()
	out, _, err := logfiltertest.Workload(f)
	require.NoError(t, err)
	return out
}

// mustNew builds a filter and checks the path it took.
func mustNew(t tb, r rt.Runtime, list string, want logfilter.Kind) *logfilter.Filter {
	t.Helper()
	f, err := logfilter.New(r, list)
	require.NoError(t, err, "list %q", list)
	require.Equal(t, want, f.Kind(), "list %q took the wrong path", list)
	return f
}

// enabled asks a handler of f in a registry of its own whether an event
// passes: for events outside spans.
func enabled(t tb, f *logfilter.Filter, ctx context.Context, target string, level slog.Level) bool {
	t.Helper()
	return enabledIn(t, logfilter.NewSpans(f), f, ctx, target, level)
}

// enabledIn asks a handler of f in the registry spans whether an event
// logged with ctx passes.
func enabledIn(t tb, spans *logfilter.Spans, f *logfilter.Filter, ctx context.Context, target string, level slog.Level) bool {
	t.Helper()
	h, err := spans.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), f)
	require.NoError(t, err)
	return h.WithAttrs([]slog.Attr{logfilter.Target(target)}).Enabled(ctx, level)
}

// lines counts the records in captured text output that contain all of
// the given substrings.
func lines(out string, subs ...string) int {
	n := 0
	for line := range strings.SplitSeq(out, "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// countingRT is an rt.Runtime whose reader/writer locks count their
// acquisitions (LF-5). It wraps any runtime: rt.Real() or the simulator.
type countingRT struct {
	rt.Runtime
	mutexes atomic.Int64 // NewRWMutex calls
	rlocks  atomic.Int64 // RLock, TryRLock, RLockContext calls
	locks   atomic.Int64 // Lock, TryLock, LockContext calls
}

func (c *countingRT) NewRWMutex(name string) rt.RWMutex {
	c.mutexes.Add(1)
	return &countingRW{RWMutex: c.Runtime.NewRWMutex(name), c: c}
}

func (c *countingRT) counts() (rlocks, locks int64) { return c.rlocks.Load(), c.locks.Load() }

type countingRW struct {
	rt.RWMutex
	c *countingRT
}

func (m *countingRW) RLock()         { m.c.rlocks.Add(1); m.RWMutex.RLock() }
func (m *countingRW) TryRLock() bool { m.c.rlocks.Add(1); return m.RWMutex.TryRLock() }
func (m *countingRW) RLockContext(ctx context.Context) error {
	m.c.rlocks.Add(1)
	return m.RWMutex.RLockContext(ctx)
}
func (m *countingRW) Lock()         { m.c.locks.Add(1); m.RWMutex.Lock() }
func (m *countingRW) TryLock() bool { m.c.locks.Add(1); return m.RWMutex.TryLock() }
func (m *countingRW) LockContext(ctx context.Context) error {
	m.c.locks.Add(1)
	return m.RWMutex.LockContext(ctx)
}

// testTime stamps records made by hand; the text handler drops it.
var testTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

package lf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// The levels of the claims, as the package documents them on slog's scale:
// tracing's TRACE is one step of 4 below slog.LevelDebug. The checks define
// them here rather than reading them from the package.
const (
	levelTrace = slog.LevelDebug - 4
	levelDebug = slog.LevelDebug
	levelInfo  = slog.LevelInfo
	levelWarn  = slog.LevelWarn
	levelError = slog.LevelError
)

// namedLevels are the levels a directive can name (off aside).
var namedLevels = []slog.Level{levelTrace, levelDebug, levelInfo, levelWarn, levelError}

// lockCounter is an rt.Runtime that counts, from outside the package, the
// locks created through it and every acquisition of them, and attributes
// each acquisition to the operation in progress on the task that took it.
//
// Attribution works under the simulator without knowing task identities. A
// task sets owner just before it calls into the package (do). Every wrapped
// lock method, which is where the package can yield to another task,
// remembers owner on entry and restores it when the inner call returns,
// that is when its own task runs again. Only one task runs at a
// time, so plain fields suffice. Under rt.Real() it is for one goroutine.
type lockCounter struct {
	rt.Runtime
	// Mutexes counts the locks the package created (NewMutex, NewRWMutex).
	Mutexes int
	// Total is every acquisition; Unattributed those taken with no
	// operation in progress, which a check keeps at zero.
	Total, Unattributed locks
	owner               *locks
	// probe, if set, is told about contended acquisitions.
	probe func(name string)
}

// locks counts acquisitions: read locks and write (exclusive) locks.
type locks struct{ R, W int64 }

func (l locks) String() string { return fmt.Sprintf("%d read, %d write", l.R, l.W) }

func newLockCounter(r rt.Runtime) *lockCounter { return &lockCounter{Runtime: r} }

// do runs f as the operation op: every lock acquisition f makes, on
// whatever interleaving, is added to op.
func (c *lockCounter) do(op *locks, f func()) {
	c.owner = op
	f()
	c.owner = nil
}

// count attributes one acquisition and returns the owner to restore.
func (c *lockCounter) count(write bool) *locks {
	o := c.owner
	target := o
	if target == nil {
		target = &c.Unattributed
	}
	if write {
		c.Total.W++
		target.W++
	} else {
		c.Total.R++
		target.R++
	}
	return o
}

func (c *lockCounter) tell(name string) {
	if c.probe != nil {
		c.probe(name)
	}
}

func (c *lockCounter) NewRWMutex(name string) rt.RWMutex {
	c.Mutexes++
	return &countedRW{RWMutex: c.Runtime.NewRWMutex(name), c: c}
}

func (c *lockCounter) NewMutex(name string) rt.Mutex {
	c.Mutexes++
	return &countedMutex{Mutex: c.Runtime.NewMutex(name), c: c}
}

// countedRW counts one reader/writer lock's acquisitions and tracks who
// holds it, for the contention probes.
type countedRW struct {
	rt.RWMutex
	c                         *lockCounter
	readers, writers, waiting int
}

func (m *countedRW) RLock() {
	o := m.contended()
	m.RWMutex.RLock()
	m.c.owner = o
	m.readers++
}

func (m *countedRW) TryRLock() bool {
	o := m.contended()
	ok := m.RWMutex.TryRLock()
	m.c.owner = o
	if ok {
		m.readers++
	}
	return ok
}

func (m *countedRW) RLockContext(ctx context.Context) error {
	o := m.contended()
	err := m.RWMutex.RLockContext(ctx)
	m.c.owner = o
	if err == nil {
		m.readers++
	}
	return err
}

// contended counts a read acquisition and reports what it runs into.
func (m *countedRW) contended() *locks {
	if m.readers > 0 {
		m.c.tell("lf/rlock-while-another-task-reads")
	}
	if m.writers > 0 || m.waiting > 0 {
		m.c.tell("lf/rlock-behind-a-writer")
	}
	return m.c.count(false)
}

// RUnlock releases the lock: under the simulator the release itself is a
// scheduling point, and the lock counts as held until it returns.
func (m *countedRW) RUnlock() {
	o := m.c.owner
	m.RWMutex.RUnlock()
	m.c.owner = o
	m.readers--
}

func (m *countedRW) Lock() {
	o := m.c.count(true)
	m.waiting++
	m.RWMutex.Lock()
	m.c.owner = o
	m.waiting--
	m.writers++
}

func (m *countedRW) TryLock() bool {
	o := m.c.count(true)
	ok := m.RWMutex.TryLock()
	m.c.owner = o
	if ok {
		m.writers++
	}
	return ok
}

func (m *countedRW) LockContext(ctx context.Context) error {
	o := m.c.count(true)
	m.waiting++
	err := m.RWMutex.LockContext(ctx)
	m.c.owner = o
	m.waiting--
	if err == nil {
		m.writers++
	}
	return err
}

func (m *countedRW) Unlock() {
	o := m.c.owner
	m.RWMutex.Unlock()
	m.c.owner = o
	m.writers--
}

type countedMutex struct {
	rt.Mutex
	c *lockCounter
}

func (m *countedMutex) Lock() {
	o := m.c.count(true)
	m.Mutex.Lock()
	m.c.owner = o
}

func (m *countedMutex) TryLock() bool {
	o := m.c.count(true)
	ok := m.Mutex.TryLock()
	m.c.owner = o
	return ok
}

func (m *countedMutex) LockContext(ctx context.Context) error {
	o := m.c.count(true)
	err := m.Mutex.LockContext(ctx)
	m.c.owner = o
	return err
}

func (m *countedMutex) Unlock() {
	o := m.c.owner
	m.Mutex.Unlock()
	m.c.owner = o
}

// Paths as the checks observe them from outside the package.
const (
	pathLockFree = "lock-free" // no lock created, none taken on enter and exit
	pathLocking  = "locking"   // a lock created, one read lock per enter and per exit
)

// observePath builds New's filter for list on a counting runtime, installs
// it alone, and enters and exits a matching and a non-matching span: the
// target path creates no lock and takes none; the span-aware path creates
// its lock and takes one read lock per enter and per exit. It returns the
// observed path (or a description of anything else), the filter's own
// Kind, and New's error.
func observePath(list string) (string, logfilter.Kind, error) {
	c := newLockCounter(rt.Real())
	f, err := logfilter.New(c, list)
	if err != nil {
		return "", 0, err
	}
	spans := logfilter.NewSpans(f)
	var start, enterExit, closing locks
	var conn, plain *logfilter.Span
	c.do(&start, func() {
		conn = spans.Start("buzz_relay::conn", "conn", slog.String("peer", "a"))
		plain = spans.Start("other", "request")
	})
	c.do(&enterExit, func() {
		for _, sp := range []*logfilter.Span{conn, plain} {
			sp.Exit(sp.Enter(context.Background()))
		}
	})
	c.do(&closing, func() { conn.Close(); plain.Close() })
	switch {
	case c.Mutexes == 0 && c.Total == (locks{}):
		return pathLockFree, f.Kind(), nil
	case c.Mutexes == 1 && enterExit == (locks{R: 4}):
		return pathLocking, f.Kind(), nil
	}
	return fmt.Sprintf("neither path: %d locks created; enter+exit of two spans took %v, start %v, close %v",
		c.Mutexes, enterExit, start, closing), f.Kind(), nil
}

// refWorkload is what workload writes for a plain list read by the
// reference (refStatic): the same records, written straight to the text
// handler when the reference passes them.
func refWorkload(r refStatic) string {
	var buf bytes.Buffer
	base := slog.New(logfiltertest.TextHandler(&buf))
	logAll := func(where string) {
		for _, target := range logfiltertest.AllTargets {
			logger := base
			if target != "" {
				logger = base.With(logfilter.Target(target))
			}
			for _, l := range logfiltertest.EventLevels {
				if r.enabled(target, l) {
					logger.Log(context.Background(), l, "event", "where", where)
				}
			}
		}
	}
	for _, where := range []string{"outside", "conn", "conn/request", "conn after request", "after conn", "request", "after request"} {
		logAll(where)
	}
	return buf.String()
}

// refLevelName reads a level name as the claims use it: trace, debug,
// info, warn, error or off, in any case; off is reported as ok with
// off=true. The empty string is not a level.
func refLevelName(s string) (level slog.Level, off, ok bool) {
	switch strings.ToLower(s) {
	case "trace":
		return levelTrace, false, true
	case "debug":
		return levelDebug, false, true
	case "info":
		return levelInfo, false, true
	case "warn":
		return levelWarn, false, true
	case "error":
		return levelError, false, true
	case "off":
		return 0, true, true
	}
	return 0, false, false
}

// refRule is one static directive of the reference reading.
type refRule struct {
	level slog.Level
	off   bool
}

// refStatic is the reference reading of a plain list, written from the
// package's documented semantics and sharing no code with it. Of the
// directives whose target covers an event's target at a "::" boundary the
// longest decides, the last one for a target wins, else the last bare
// level, else nothing; off enables nothing.
type refStatic struct {
	targets map[string]refRule
	global  *refRule
}

// refRead reads a plain list; ok is false if the list is not plain.
func refRead(list string) (refStatic, bool) {
	r := refStatic{targets: map[string]refRule{}}
	if !refPlain(list) {
		return r, false
	}
	for _, seg := range strings.Split(list, ",") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		target, lv, hasTarget := strings.Cut(seg, "=")
		if !hasTarget {
			lv = seg
		}
		l, off, _ := refLevelName(lv)
		if hasTarget {
			r.targets[target] = refRule{l, off}
		} else {
			r.global = &refRule{l, off}
		}
	}
	return r, true
}

func (r refStatic) enabled(target string, level slog.Level) bool {
	best, found := "", false
	for t := range r.targets { //windtunnel:unordered the longest covering target is unique
		covers := target == t || strings.HasPrefix(target, t+"::")
		if covers && (!found || len(t) > len(best)) {
			best, found = t, true
		}
	}
	var rule refRule
	switch {
	case found:
		rule = r.targets[best]
	case r.global != nil:
		rule = *r.global
	default:
		return false
	}
	return !rule.off && level >= rule.level
}

// refPlain is the reference classifier of LF-1, written from the claim's
// words: a list is plain exactly when every non-empty segment, trimmed, is
// `level` or `target=level` with a known, non-empty level, and no segment
// names a span `[...]` or a field `{...}`. A target is what the package
// documents as one: words of letters, digits, '_', '-' and '.' joined by
// "::".
//
// The claim's words say nothing of size, but the package bounds the lists
// it reads: a list both parsers do not accept can take neither path's
// reading, so it is not plain however well formed its segments are. Which
// lists the parsers accept is observed by calling them (parsersAccept),
// never read from the package's limits: a classifier that refused a list
// the parsers still accept (a limit made inclusive) shows at the limit
// rows of LF-1's check.
func refPlain(list string) bool {
	return refPlainGrammar(list) && parsersAccept(list)
}

// parsersAccept reports whether the span-aware parser and the target
// table's own parser both accept list, as observed by calling them.
func parsersAccept(list string) bool {
	_, errAware := logfilter.Parse(list)
	_, errTable := logfilter.ParseTargets(list)
	return errAware == nil && errTable == nil
}

// refPlainGrammar is the claim's grammar of a plain list, segment by
// segment, whatever the list's size.
func refPlainGrammar(list string) bool {
	for _, seg := range strings.Split(list, ",") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		if strings.ContainsAny(seg, "[]{}") {
			return false // names a span or a field
		}
		if _, _, ok := refLevelName(seg); ok {
			continue // `level`
		}
		i := strings.IndexByte(seg, '=')
		if i < 0 {
			return false // neither a level nor target=level
		}
		target, lv := seg[:i], seg[i+1:]
		if !refTarget(target) {
			return false // empty or malformed target
		}
		if _, _, ok := refLevelName(lv); !ok {
			return false // empty, unknown, or with a second '='
		}
	}
	return true
}

func refTarget(s string) bool {
	if s == "" {
		return false
	}
	for _, word := range strings.Split(s, "::") {
		if word == "" {
			return false
		}
		for _, r := range word {
			if !isWordRune(r) {
				return false
			}
		}
	}
	return true
}

func isWordRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// errText is an error's text, or "" for nil, for comparing two errors.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// lines counts the records in captured output.
func lines(out string) int { return strings.Count(out, "\n") }

// onceWrong returns a function that counts one wrong observation (a list)
// in smp the first time it is called, described by prefix and the first
// problem; later problems with the same list are not counted again.
func onceWrong(smp *claims.Sample, prefix string) func(format string, a ...any) {
	done := false
	return func(format string, a ...any) {
		if done {
			return
		}
		done = true
		smp.Wrongly(func() string { return prefix + fmt.Sprintf(format, a...) })
	}
}

package lf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// The two filters of LF-4's world, installed together as logs and
// telemetry: logs enables debug inside conn spans (and error inside quiet
// ones, a less verbose directive for a span nested in conn), telemetry
// trace inside request spans. Three directives test how span directives
// combine, as EnvFilter (tracing-subscriber 0.3) combines them. A conn span
// of buzz_relay, or of a target below it, is matched by two directives, and
// the more verbose wins whatever their order (EnvFilter keeps the most
// verbose level of the matching directives without fields). A poll span
// enables info only when its target is buzz_relay or below it. The spans
// task 0 creates (field task=0) enable debug for telemetry, a directive
// with fields and no span name. The span [quiet] is named twice: the later
// directive replaces the earlier, as in EnvFilter's directive set, so
// quiet spans enable error, not debug. Two directives name no level, which
// EnvFilter reads as every level: [connection] (inside connection spans)
// and the bare target other (for its events everywhere).
const (
	lf4Logs = "warn,buzz_relay[conn]=info,[conn]=debug,[quiet]=debug,[quiet]=error,buzz_relay[poll]=info"
	lf4Otel = "error,[request]=trace,[{task=0}]=debug,[connection],other"
)

// The plain lists a shape gives a filter instead of its span list: the
// filter is then a target table, which keeps no span state, next to the
// other filter's span-aware one in the same registry.
const (
	lf4LogsPlain = "warn,buzz_relay::conn=debug"
	lf4OtelPlain = "error,other=trace"
)

// lf4Shape is a registry shape: which of the two filters takes its span
// list (span-aware) and which a plain list (the target table), and in
// which order they are given to NewSpans. A handler must find its filter's
// levels among the span-aware filters alone, whatever the order and the mix:
// a plain filter installed before a span-aware one shifts every position
// counted among all the filters.
type lf4Shape struct {
	logsAware, otelAware bool
	otelFirst            bool // telemetry given to NewSpans before logs
}

// lf4Shapes are every shape with a span-aware filter in it: both
// span-aware, or one of them next to a target table, each in both orders.
// (Two target tables are LF-5's, which flies every shape.)
var lf4Shapes = []lf4Shape{
	{logsAware: true, otelAware: true},
	{logsAware: true, otelAware: true, otelFirst: true},
	{logsAware: true},
	{logsAware: true, otelFirst: true},
	{otelAware: true},
	{otelAware: true, otelFirst: true},
}

func (sh lf4Shape) String() string {
	kind := func(aware bool) string {
		if aware {
			return "span-aware"
		}
		return "target table"
	}
	first := "logs"
	if sh.otelFirst {
		first = "telemetry"
	}
	return fmt.Sprintf("logs %s, telemetry %s, %s installed first", kind(sh.logsAware), kind(sh.otelAware), first)
}

// lists are the shape's directive lists for logs and telemetry.
func (sh lf4Shape) lists() (logs, otel string) {
	logs, otel = lf4LogsPlain, lf4OtelPlain
	if sh.logsAware {
		logs = lf4Logs
	}
	if sh.otelAware {
		otel = lf4Otel
	}
	return logs, otel
}

// install builds the shape's filters on r, checks that each took the path
// its list's kind says, and installs them in the shape's order.
func (sh lf4Shape) install(r rt.Runtime) (spans *logfilter.Spans, logs, otel *logfilter.Filter, err error) {
	logsList, otelList := sh.lists()
	if logs, err = logfilter.New(r, logsList); err != nil {
		return nil, nil, nil, err
	}
	if otel, err = logfilter.New(r, otelList); err != nil {
		return nil, nil, nil, err
	}
	for _, c := range []struct {
		f     *logfilter.Filter
		aware bool
	}{{logs, sh.logsAware}, {otel, sh.otelAware}} {
		if want := map[bool]logfilter.Kind{true: logfilter.KindSpanAware, false: logfilter.KindTargets}[c.aware]; c.f.Kind() != want {
			return nil, nil, nil, fmt.Errorf("LF-4 (%s): a filter took the %v path, want %v", sh, c.f.Kind(), want)
		}
	}
	if sh.otelFirst {
		return logfilter.NewSpans(otel, logs), logs, otel, nil
	}
	return logfilter.NewSpans(logs, otel), logs, otel, nil
}

// selects reports whether a span-aware filter of the shape has a span
// directive matching sp (read from the lists, as lf4Want reads them). If
// so, entering sp while it is open adds it to the context. A span no
// directive selects adds nothing, and its Exit leaves the context as it is
// (the package's documented Enter and Exit).
func (sh lf4Shape) selects(sp *lf4Span) bool {
	logs := sp.name == "conn" || sp.name == "quiet" ||
		(sp.name == "poll" && (sp.target == "buzz_relay" || strings.HasPrefix(sp.target, "buzz_relay::")))
	otel := sp.name == "request" || sp.name == "connection" || sp.task == 0
	return (sh.logsAware && logs) || (sh.otelAware && otel)
}

// want is the reference for the shape: lf4Want for a span-aware filter,
// the reference reading of its plain list (refStatic) for a target table,
// which no span changes.
func (sh lf4Shape) want(tc *taskCtx, target string, l slog.Level) (logs, otel bool) {
	logs, otel = lf4Want(tc, target, l)
	if !sh.logsAware {
		logs = lf4LogsPlainRef.enabled(target, l)
	}
	if !sh.otelAware {
		otel = lf4OtelPlainRef.enabled(target, l)
	}
	return logs, otel
}

// The reference readings of the plain lists, read once.
var (
	lf4LogsPlainRef, _ = refRead(lf4LogsPlain)
	lf4OtelPlainRef, _ = refRead(lf4OtelPlain)
)

// lf4Names are the span names the tasks create: conn, its lookalike, and
// spans the other directives (or none) select.
var lf4Names = []string{"conn", "conn", "connection", "request", "quiet", "poll"}

// lf4SpanTargets are the targets spans are created with: a span directive
// without a target selects spans of any target.
var lf4SpanTargets = []string{"buzz_relay", "buzz_relay::conn", "other", ""}

// lf4Span is a span of the world, as the check knows it.
type lf4Span struct {
	sp      *logfilter.Span
	name    string
	target  string
	task    int // the task that started it: its field task
	closed  bool
	dropped bool // a shrinker dropped its start (sim.Keep): it does not exist
}

// frame is one entered span in the check's model of a context: the span,
// and whether it was still open when it was entered (a closed span enables
// nothing when entered; a context entered before Close keeps it). A
// scoped frame is one Enter added to the context: the span was open and a
// span-aware filter's directive selects it (lf4Shape.selects). A skipped
// frame is an enter a shrinker dropped (or of a span whose start it
// dropped): the context did not change, and the frame is there only so
// that the program's exit of it changes nothing.
type frame struct {
	span    *lf4Span
	live    bool
	scoped  bool
	skipped bool
}

// exited is the model of sp.Exit on tc's context. Exit returns the context
// from before the innermost Enter of sp that added to it, so it leaves
// every span entered within sp too, whatever order the program closes
// them in (an outer span exited while an inner one is open leaves both).
// If no Enter of sp added to the context, Exit returns it unchanged, and
// only sp's own frame, which enables nothing, goes. It returns how many
// frames that were not skipped were left with sp's.
func (tc *taskCtx) exited(sp *lf4Span) (within int) {
	for j := len(tc.stack) - 1; j >= 0; j-- {
		if f := tc.stack[j]; f.span == sp && f.scoped {
			for _, above := range tc.stack[j+1:] {
				if !above.skipped {
					within++
				}
			}
			tc.stack = tc.stack[:j]
			return within
		}
	}
	for j := len(tc.stack) - 1; j >= 0; j-- {
		if f := tc.stack[j]; f.span == sp && !f.skipped {
			tc.stack = append(tc.stack[:j:j], tc.stack[j+1:]...)
			return 0
		}
	}
	return 0
}

// taskCtx is a context and the check's model of the spans entered in it.
type taskCtx struct {
	ctx   context.Context
	stack []frame
}

func (tc *taskCtx) fork() *taskCtx {
	return &taskCtx{ctx: tc.ctx, stack: append([]frame(nil), tc.stack...)}
}

func (tc *taskCtx) has(name string) bool {
	return tc.hasWhere(func(sp *lf4Span) bool { return sp.name == name })
}

// hasWhere reports whether tc is inside a live span for which match holds.
func (tc *taskCtx) hasWhere(match func(*lf4Span) bool) bool {
	for _, f := range tc.stack {
		if f.live && match(f.span) {
			return true
		}
	}
	return false
}

func (tc *taskCtx) hasSpan(sp *lf4Span) bool {
	for _, f := range tc.stack {
		if f.span == sp && !f.skipped {
			return true
		}
	}
	return false
}

func (tc *taskCtx) names() string {
	var parts []string
	for _, f := range tc.stack {
		if f.skipped {
			continue
		}
		n := f.span.name
		if !f.live {
			n += "(closed)"
		}
		parts = append(parts, n)
	}
	if len(parts) == 0 {
		return "outside every span"
	}
	return "inside " + strings.Join(parts, "/")
}

// lf4Want is LF-4's reference, from the claim's words and the two lists.
// An event passes the logs filter at WARN and above. It passes it at DEBUG
// and above inside a conn span or any span entered within one (of any
// target: the more verbose of [conn]=debug and buzz_relay[conn]=info). It
// passes it at INFO and above inside a poll span of buzz_relay or a target
// below it, and at ERROR and above inside a quiet span. An event passes
// the telemetry filter at ERROR and above, at TRACE and above inside a
// request span, and at DEBUG and above inside a span task 0 started. It
// also passes it at TRACE and above inside a connection span or from the
// target other (or one below it).
func lf4Want(tc *taskCtx, target string, l slog.Level) (logs, otel bool) {
	logs, otel = l >= levelWarn, l >= levelError
	if tc.has("conn") {
		logs = logs || l >= levelDebug
	}
	if tc.hasWhere(func(sp *lf4Span) bool {
		return sp.name == "poll" && (sp.target == "buzz_relay" || strings.HasPrefix(sp.target, "buzz_relay::"))
	}) {
		logs = logs || l >= levelInfo
	}
	if tc.has("quiet") {
		logs = logs || l >= levelError
	}
	if tc.has("request") {
		otel = otel || l >= levelTrace
	}
	if tc.hasWhere(func(sp *lf4Span) bool { return sp.task == 0 }) {
		otel = otel || l >= levelDebug
	}
	if tc.has("connection") || target == "other" || strings.HasPrefix(target, "other::") {
		otel = otel || l >= levelTrace
	}
	return logs, otel
}

// lf4Event is one logged event and what the reference says of it.
type lf4Event struct {
	level              slog.Level
	target, where      string
	wantLogs, wantOtel bool
}

// lf4World is LF-4's world: tasks that create, enter, nest, exit and close
// spans, start tasks inside them and log, over one span registry with both
// filters installed; the simulator interleaves them at every lock the
// span-aware filters take and at the explicit yields.
type lf4World struct {
	s         *sim.Sim
	shape     lf4Shape
	spans     *logfilter.Spans
	base      *slog.Logger
	logs      bytes.Buffer
	otel      bytes.Buffer
	events    []lf4Event
	shared    *lf4Span
	current   []*taskCtx // each worker's current context (nil: none)
	calls     int        // tasks inside Enter or Exit
	writes    int        // tasks inside Start or Close
	spansMade int
}

// newLF4World builds the world of one seed, its registry's shape drawn
// from the seed: both filters span-aware or one a target table, installed
// in either order.
func newLF4World(s *sim.Sim, workers int) (*lf4World, error) {
	shape := lf4Shapes[s.Rand().IntN(len(lf4Shapes))]
	spans, logs, otel, err := shape.install(s)
	if err != nil {
		return nil, err
	}
	w := &lf4World{s: s, shape: shape, spans: spans, current: make([]*taskCtx, workers+1)}
	lh, err := w.spans.Handler(logfiltertest.TextHandler(&w.logs), logs)
	if err != nil {
		return nil, err
	}
	oh, err := w.spans.Handler(logfiltertest.TextHandler(&w.otel), otel)
	if err != nil {
		return nil, err
	}
	w.base = slog.New(slog.NewMultiHandler(lh, oh))
	return w, nil
}

// opBegin records a span operation's invocation in the run's record (and
// counts it); opEnd its return. The texts are built only when the run
// records.
func (w *lf4World) opBegin(what string, sp *lf4Span) record.EventID {
	if !w.s.Recording() {
		w.s.OpBegin("")
		return record.NoEvent
	}
	if sp == nil {
		return w.s.OpBegin("%s", what)
	}
	return w.s.OpBegin("%s %s (%s)", what, sp.name, sp.target)
}

func (w *lf4World) opEnd(op record.EventID) {
	if op != record.NoEvent {
		w.s.OpEnd(op, "ok")
	}
}

// start creates a span: an operation a shrinker may drop (sim.Keep), and
// with it every enter, exit and close of the span.
func (w *lf4World) start(name, target string, task int) *lf4Span {
	out := &lf4Span{name: name, target: target, task: task}
	if !w.s.Keep(sim.KeepOperation) {
		out.dropped = true
		return out
	}
	op := w.opBegin("start", out)
	w.writes++
	out.sp = w.spans.Start(target, name, slog.Int("task", task), slog.Int("n", w.spansMade))
	w.writes--
	w.spansMade++
	w.opEnd(op)
	return out
}

// close closes sp; it is made exactly when sp's start was.
func (w *lf4World) close(sp *lf4Span) {
	if sp.dropped {
		return
	}
	if w.calls > 0 {
		w.s.Probe("lf/close-while-another-task-enters-or-exits")
	}
	op := w.opBegin("close", sp)
	w.writes++
	sp.sp.Close()
	w.writes--
	sp.closed = true
	w.opEnd(op)
}

// otherInside reports whether a worker other than task is inside a span
// named name (or inside sp itself, when sp is set).
func (w *lf4World) otherInside(task int, name string, sp *lf4Span) bool {
	for i, tc := range w.current {
		if i == task || tc == nil {
			continue
		}
		if (sp != nil && tc.hasSpan(sp)) || (sp == nil && tc.has(name)) {
			return true
		}
	}
	return false
}

// enter enters sp in tc: an operation a shrinker may drop (sim.Keep),
// with its exit; the Keep is asked whether or not sp exists, so that what
// is asked does not depend on what was dropped before.
func (w *lf4World) enter(tc *taskCtx, sp *lf4Span, task int) {
	if !w.s.Keep(sim.KeepOperation) || sp.dropped {
		tc.stack = append(tc.stack, frame{span: sp, skipped: true})
		return
	}
	if w.writes > 0 {
		w.s.Probe("lf/enter-while-another-task-creates-or-closes-a-span")
	}
	if w.otherInside(task, "conn", nil) {
		w.s.Probe("lf/enter-while-another-task-is-inside-conn")
	}
	if sp == w.shared && w.otherInside(task, "", sp) {
		w.s.Probe("lf/shared-conn-span-entered-by-two-tasks")
	}
	op := w.opBegin("enter", sp)
	w.calls++
	tc.ctx = sp.sp.Enter(tc.ctx)
	w.calls--
	live := !sp.closed
	tc.stack = append(tc.stack, frame{span: sp, live: live, scoped: live && w.shape.selects(sp)})
	w.opEnd(op)
}

// exitAt exits the span of tc's i-th frame, innermost or not: an outer
// span exited while spans entered within it are open leaves them too
// (taskCtx.exited). It is made exactly when that frame's enter was: a
// skipped frame just goes.
func (w *lf4World) exitAt(tc *taskCtx, i int) {
	f := tc.stack[i]
	if f.skipped {
		tc.stack = append(tc.stack[:i:i], tc.stack[i+1:]...)
		return
	}
	op := w.opBegin("exit", f.span)
	w.calls++
	tc.ctx = f.span.sp.Exit(tc.ctx)
	w.calls--
	if tc.exited(f.span) > 0 {
		w.s.Probe("lf/outer-span-exited-while-an-inner-one-is-open")
	}
	w.opEnd(op)
}

// exitDrawn exits a span of tc drawn from the seed: the innermost one
// half the time, else any of them, so programs exit spans in every order.
func (w *lf4World) exitDrawn(tc *taskCtx) {
	r := w.s.Rand()
	i := r.IntN(len(tc.stack))
	if r.IntN(2) == 0 {
		i = len(tc.stack) - 1
	}
	w.exitAt(tc, i)
}

// log logs an event at every event level from one target with tc. It is
// an operation a shrinker may drop (sim.Keep): then nothing is logged and
// no event is expected. (So are starts and enters, each with the close or
// exit that pairs with it, so that a shrunk program stays well formed.)
func (w *lf4World) log(tc *taskCtx, who string) {
	target := logfiltertest.AllTargets[w.s.Rand().IntN(len(logfiltertest.AllTargets))]
	if !w.s.Keep(sim.KeepOperation) {
		return
	}
	op := record.NoEvent
	if w.s.Recording() {
		op = w.s.OpBegin("%s: log from %q in %s", who, target, tc.names())
	} else {
		w.s.OpBegin("")
	}
	defer w.opEnd(op)
	if tc.has("conn") && w.calls > 0 {
		w.s.Probe("lf/log-inside-conn-while-another-task-enters-or-exits")
	}
	logger := w.base
	if target != "" {
		logger = w.base.With(logfilter.Target(target))
	}
	where := who + " " + tc.names()
	for _, l := range logfiltertest.EventLevels {
		wl, wo := w.shape.want(tc, target, l)
		w.events = append(w.events, lf4Event{level: l, target: target, where: where, wantLogs: wl, wantOtel: wo})
		logger.Log(tc.ctx, l, "e"+strconv.Itoa(len(w.events)-1))
	}
}

// directed is the fixed part every seed runs first, on the root task:
// outside, a request span alone, the lookalike alone, conn, request in
// conn, quiet in request in conn, the lookalike below them, and back out.
// A task started inside conn and one started three spans below it log only
// after the root has exited and closed every span (a context keeps what it
// had when the span was entered).
func (w *lf4World) directed(wg rt.WaitGroup) {
	tc := &taskCtx{ctx: context.Background()}
	w.current[0] = tc
	conn, req := w.start("conn", "buzz_relay", 0), w.start("request", "buzz_relay", 0)
	quiet, look := w.start("quiet", "other", 0), w.start("connection", "buzz_relay", 0)
	w.log(tc, "root")
	for _, alone := range []*lf4Span{req, look, quiet} {
		w.enter(tc, alone, 0)
		w.log(tc, "root")
		w.exitAt(tc, len(tc.stack)-1)
	}
	closed := w.s.NewEvent("root closed its spans")
	for i, sp := range []*lf4Span{conn, req, quiet, look} {
		w.enter(tc, sp, 0)
		w.log(tc, "root")
		if i == 0 || i == 3 {
			child := tc.fork()
			wg.Add(1)
			w.s.Go("root child", func() {
				defer wg.Done()
				_ = closed.Wait(context.Background())
				if child.has("conn") && len(tc.stack) == 0 {
					w.s.Probe("lf/task-started-inside-conn-logs-after-its-parent-exited")
				}
				w.log(child, "root child")
			})
		}
	}
	for range 4 {
		w.exitAt(tc, len(tc.stack)-1)
		w.log(tc, "root")
	}
	// Out of order: conn exited while quiet, entered within it, is open
	// (the context is outside both again); then request exited between
	// conn and quiet (inside conn alone again), and conn.
	w.enter(tc, conn, 0)
	w.enter(tc, quiet, 0)
	w.log(tc, "root")
	w.exitAt(tc, 0)
	w.log(tc, "root")
	for _, sp := range []*lf4Span{conn, req, quiet} {
		w.enter(tc, sp, 0)
	}
	w.exitAt(tc, 1)
	w.log(tc, "root")
	for len(tc.stack) > 0 {
		w.exitAt(tc, 0)
	}
	w.log(tc, "root")
	for _, sp := range []*lf4Span{conn, req, quiet, look} {
		w.close(sp)
	}
	// Entering a closed span enables nothing.
	w.enter(tc, conn, 0)
	w.log(tc, "root")
	w.exitAt(tc, 0)
	closed.Set()
	w.current[0] = nil
}

// worker runs rounds of a seeded program: enter spans (the shared conn span
// or new ones) up to three deep, exit the innermost, log, start a task
// inside the current spans, yield. Then it exits everything, logs outside,
// closes its spans and, now and then, enters one of them again after its
// close.
func (w *lf4World) worker(task, rounds int, wg rt.WaitGroup) {
	r := w.s.Rand()
	for round := range rounds {
		tc := &taskCtx{ctx: context.Background()}
		w.current[task] = tc
		var own []*lf4Span
		who := fmt.Sprintf("task %d round %d", task, round)
		for range 6 + r.IntN(6) {
			switch k := r.IntN(10); {
			case k < 3 && len(tc.stack) < 3:
				sp := w.shared
				if r.IntN(3) > 0 {
					sp = w.start(lf4Names[r.IntN(len(lf4Names))], lf4SpanTargets[r.IntN(len(lf4SpanTargets))], task)
					own = append(own, sp)
				}
				w.enter(tc, sp, task)
			case k < 5 && len(tc.stack) > 0:
				w.exitDrawn(tc)
			case k < 8:
				w.log(tc, who)
			case k == 8 && len(tc.stack) > 0:
				child, depth := tc.fork(), len(tc.stack)
				wg.Add(1)
				w.s.Go(who+" child", func() {
					defer wg.Done()
					for range r.IntN(6) {
						w.s.Yield()
					}
					if child.has("conn") && len(tc.stack) < depth {
						w.s.Probe("lf/task-started-inside-conn-logs-after-its-parent-exited")
					}
					w.log(child, who+" child")
				})
			default:
				w.s.Yield()
			}
		}
		w.log(tc, who)
		for len(tc.stack) > 0 {
			w.exitDrawn(tc)
		}
		w.log(tc, who)
		for _, sp := range own {
			w.close(sp)
		}
		if len(own) > 0 && r.IntN(3) == 0 {
			w.enter(tc, own[r.IntN(len(own))], task) // closed: enables nothing
			w.log(tc, who)
			w.exitAt(tc, 0)
		}
		w.current[task] = nil
		w.s.Yield()
	}
}

// judge compares every event's fate in the captured outputs with the
// reference.
func (w *lf4World) judge(smp *claims.Sample) error {
	logged := func(out string) ([]int, error) {
		n := make([]int, len(w.events))
		for line := range strings.SplitSeq(out, "\n") {
			if line == "" {
				continue
			}
			_, rest, ok := strings.Cut(line, " msg=e")
			id, err := strconv.Atoi(strings.Fields(rest + " ")[0])
			if !ok || err != nil || id < 0 || id >= len(n) {
				return nil, fmt.Errorf("a record that no event of the world logged: %q", line)
			}
			n[id]++
		}
		return n, nil
	}
	logs, err := logged(w.logs.String())
	if err != nil {
		return err
	}
	otel, err := logged(w.otel.String())
	if err != nil {
		return err
	}
	logsList, otelList := w.shape.lists()
	for i, e := range w.events {
		smp.Of++
		for _, c := range []struct {
			filter string
			want   bool
			got    int
		}{{"logs " + logsList, e.wantLogs, logs[i]}, {"telemetry " + otelList, e.wantOtel, otel[i]}} {
			if c.got != map[bool]int{true: 1, false: 0}[c.want] {
				smp.Wrongly(func() string {
					return fmt.Sprintf("the %s filter (%s) wrote %d records of an event at %s from target %q, %s (want %v)", c.filter, w.shape, c.got, e.level, e.target, e.where, c.want)
				})
			}
		}
	}
	return nil
}

// lf4Result is one seed of LF-4.
type lf4Result struct {
	smp                 claims.Sample
	events, logs, spans int
	shape               int // index in lf4Shapes
}

// flyLF4 is one seed of LF-4's check: the directed part on the root task,
// workers tasks of rounds rounds each, then every event's fate judged.
func flyLF4(s *sim.Sim, workers, rounds int) (lf4Result, error) {
	var res lf4Result
	w, err := newLF4World(s, workers)
	if err != nil {
		return res, err
	}
	res.shape = slices.Index(lf4Shapes, w.shape)
	w.shared = w.start("conn", "buzz_relay", 0)
	wg := s.NewWaitGroup("tasks")
	w.directed(wg)
	for task := 1; task <= workers; task++ {
		wg.Add(1)
		s.Go(fmt.Sprintf("task-%d", task), func() {
			defer wg.Done()
			w.worker(task, rounds, wg)
		})
	}
	if err := wg.Wait(context.Background()); err != nil {
		return res, err
	}
	w.close(w.shared)
	if err := w.judge(&res.smp); err != nil {
		return res, err
	}
	res.events, res.logs, res.spans = len(w.events), lines(w.logs.String())+lines(w.otel.String()), w.spansMade
	if res.smp.Wrong > 0 {
		return res, fmt.Errorf("LF-4: %d of %d event fates wrong; first: %s", res.smp.Wrong, res.smp.Of, res.smp.Witness)
	}
	return res, nil
}

// TestLF4_SpanScopeUnderInterleavings checks LF-4 under the simulator:
// [conn]=debug enables debug events only inside a conn span and the spans
// entered within it. Logs and telemetry filters are installed together, in
// a registry shape drawn from the seed (both span-aware, or one of them a
// target table, in either order: lf4Shapes). The root task runs a directed
// sequence (with spans exited out of order). Then four tasks run seeded
// programs that create spans (conn, its lookalike connection, request,
// quiet, poll; and one conn span shared by all) and enter them up to three
// deep. They exit and close them, and start tasks inside them that log
// later (after their parent may have exited and closed the span). They log
// an event at every level from a random target at every step. Spans are
// exited in orders drawn from the seed, an outer one while inner ones are
// open too. The scheduler interleaves them
// at every lock of the span-aware filters. Every event's fate in each
// filter's captured output is compared with the reference reading of the
// two lists. Probes require the interleavings that matter.
func TestLF4_SpanScopeUnderInterleavings(t *testing.T) {
	const workers, rounds = 4, 6
	var events, logged, spans int
	claims.Run(t, claims.Check[lf4Result]{
		Claim: "LF-4", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (lf4Result, error) { return flyLF4(s, workers, rounds) },
		Sample: func(r lf4Result) claims.Sample {
			events, logged, spans = events+r.events, logged+r.logs, spans+r.spans
			smp := r.smp
			smp.Tally = map[string]int64{fmt.Sprintf("shape.%d", r.shape): 1}
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d event fates wrong (%d events at every level, each judged in the logs and the telemetry output; %d records written; %d spans created by %d tasks and the tasks they started, exited in orders drawn from the seed, outer ones before inner ones too); seeds per registry shape: %s; %s",
				o.Wrong, o.Of, events, logged, spans, workers, lf4ShapeCounts(o.Tally), o.SeedsText())
		},
		Note: fmt.Sprintf("simulated: logs %q and telemetry %q installed together (or one of them as the plain %q or %q, in either order); reference from the claim's words; real goroutines: TestLF4_RealGoroutinesRaceFree under the race detector (make race, and the Race mutants lf-register-without-lock and lf-unregister-without-lock)", lf4Logs, lf4Otel, lf4LogsPlain, lf4OtelPlain),
		Probes: []claims.Probe{
			{Name: "lf/log-inside-conn-while-another-task-enters-or-exits", What: "a task logged inside its conn span while another task was entering or exiting a span (inside the filters' read locks)", Min: 20},
			{Name: "lf/enter-while-another-task-is-inside-conn", What: "a span entered on one task while another task was inside a conn span", Min: 20},
			{Name: "lf/enter-while-another-task-creates-or-closes-a-span", What: "a span entered while another task was creating or closing one (the filters' write locks)", Min: 10},
			{Name: "lf/shared-conn-span-entered-by-two-tasks", What: "the shared conn span entered by a task while another task was inside it", Min: 3},
			{Name: "lf/task-started-inside-conn-logs-after-its-parent-exited", What: "a task started inside a conn span logged after its parent had left the span", Min: 2},
			{Name: "lf/close-while-another-task-enters-or-exits", What: "a span closed while another task was entering or exiting one", Min: 5},
			{Name: "lf/outer-span-exited-while-an-inner-one-is-open", What: "a span exited while a span entered within it was still open (out of order)", Min: 40},
		},
	})
}

// lf4ShapeCounts says how many seeds flew each registry shape.
func lf4ShapeCounts(tally map[string]int64) string {
	parts := make([]string, len(lf4Shapes))
	for i, sh := range lf4Shapes {
		parts[i] = fmt.Sprintf("%s: %d", sh, tally[fmt.Sprintf("shape.%d", i)])
	}
	return strings.Join(parts, "; ")
}

package lf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// lf5Configs are the installations LF-5's check flies. Both filters of the
// source text (logs and telemetry) are on the target path, or on the
// span-aware path for three reasons (span directives, the span-aware
// filter forced onto the same plain lists, as before the change, and empty
// levels). Others have one of each (the span-aware one for logs, and for
// telemetry), or one filter alone. Every two-filter installation is flown
// in both orders of NewSpans, the first drawn from the seed (lf5Orders).
// So every registry shape is covered, a target table installed before a
// span-aware filter too. That order shifts the span-aware filter's
// position among all the filters away from its position among the
// span-aware ones. How many span-aware filters each has is derived from the
// reference classifier, not from the package.
var lf5Configs = []struct {
	name       string
	logs, otel string // otel "": the logs filter alone
	forced     bool   // NewSpanAware instead of New
}{
	{"target path, logs and telemetry", "info,buzz_relay=debug", "warn", false},
	{"target path, one filter", "warn,buzz_relay::conn=trace", "", false},
	{"span-aware, span directives", "info,[conn]=debug", "warn,[poll]=trace", false},
	{"span-aware forced onto the plain lists", "info,buzz_relay=debug", "warn", true},
	{"span-aware, empty levels", "info,buzz_relay=", "warn,other=", false},
	{"one span-aware filter next to a target table", "info,[conn]=debug", "warn", false},
	{"a target table next to one span-aware filter", "warn", "info,[conn]=debug", false},
}

// lf5Orders are the orders a configuration's filters are given to
// NewSpans in: as listed (logs first), or reversed. A seed flies both, in
// an order it draws.
func lf5Orders(s *sim.Sim, two bool) []bool {
	if !two {
		return []bool{false}
	}
	if s.Rand().IntN(2) == 0 {
		return []bool{false, true}
	}
	return []bool{true, false}
}

// awareFilters is how many of a configuration's filters are span-aware by
// the claims: the forced ones and those whose list is not plain.
func awareFilters(logs, otel string, forced bool) int {
	lists := []string{logs}
	if otel != "" {
		lists = append(lists, otel)
	}
	n := 0
	for _, l := range lists {
		if forced || !refPlain(l) {
			n++
		}
	}
	return n
}

// The operations whose locks LF-5's check counts.
const (
	opEnter = iota
	opExit
	opLog
	opStart
	opClose
	numOps
)

var opNames = [numOps]string{"enter", "exit", "log", "start", "close"}

// extent is the range of lock counts a kind of operation took.
type extent struct {
	n        int64
	min, max locks
}

func (e *extent) add(l locks) {
	if e.n == 0 {
		e.min, e.max = l, l
	}
	e.min.R, e.min.W = min(e.min.R, l.R), min(e.min.W, l.W)
	e.max.R, e.max.W = max(e.max.R, l.R), max(e.max.W, l.W)
	e.n++
}

func (e extent) reads() string {
	if e.min.R == e.max.R {
		return fmt.Sprintf("%d", e.min.R)
	}
	return fmt.Sprintf("%d to %d", e.min.R, e.max.R)
}

// lf5Result is one seed of LF-5: the counts per number of installed
// span-aware filters (0, 1, 2) and operation.
type lf5Result struct {
	smp     claims.Sample
	ops     [3][numOps]extent
	mutexes [3]int
}

// lf5Fly runs one configuration: four tasks, each for eight rounds
// creating a conn span and a poll span inside it, entering both and the
// span shared by all tasks, logging events both filters drop, exiting and
// closing, with seeded yields between the steps. Every lock acquisition is
// counted by the runtime wrapper and attributed to the operation in
// progress on its task.
func lf5Fly(s *sim.Sim, res *lf5Result, logsList, otelList string, forced, reversed bool, want [numOps]*locks, class int) error {
	c := newLockCounter(s)
	c.probe = s.Probe
	mk := logfilter.New
	if forced {
		mk = logfilter.NewSpanAware
	}
	logs, err := mk(c, logsList)
	if err != nil {
		return err
	}
	filters := []*logfilter.Filter{logs}
	if otelList != "" {
		otel, err := mk(c, otelList)
		if err != nil {
			return err
		}
		filters = append(filters, otel)
	}
	installed := slices.Clone(filters)
	if reversed {
		slices.Reverse(installed)
	}
	spans := logfilter.NewSpans(installed...)
	var handlers []slog.Handler
	for _, f := range filters {
		h, err := spans.Handler(logfiltertest.TextHandler(new(bytes.Buffer)), f)
		if err != nil {
			return err
		}
		handlers = append(handlers, h)
	}
	logger := slog.New(slog.NewMultiHandler(handlers...)).With(logfilter.Target("buzz_relay::conn"))
	var shared *logfilter.Span
	var misc locks
	c.do(&misc, func() { shared = spans.Start("buzz_relay", "conn", slog.String("peer", "shared")) })
	inShared := 0
	const tasks, rounds = 4, 8
	wg := s.NewWaitGroup("tasks")
	for task := range tasks {
		wg.Add(1)
		s.Go(fmt.Sprintf("task-%d", task), func() {
			defer wg.Done()
			r := s.Rand()
			// op runs one operation and reports whether it ran. Starts,
			// enters and logs are operations a shrinker may drop
			// (sim.Keep, asked whatever need says, so that what is asked
			// does not depend on what was dropped before); an exit or a
			// close runs exactly when its enter or start did (need), so
			// that a shrunk program stays well formed. The yield's draw
			// is made either way.
			op := func(kind int, need bool, f func()) bool {
				if kind == opStart || kind == opEnter || kind == opLog {
					need = s.Keep(sim.KeepOperation) && need
				}
				if !need {
					if r.IntN(3) == 0 {
						s.Yield()
					}
					return false
				}
				ev := lf5Begin(s, task, kind)
				var l locks
				c.do(&l, f)
				lf5End(s, ev, l)
				res.ops[class][kind].add(l)
				if kind == opEnter || kind == opExit {
					if class == 0 {
						res.smp.Observe(float64(l.R+l.W), func() string {
							return fmt.Sprintf("%s: a span %s took %v locks", strings.TrimSpace(logsList+" / "+otelList), opNames[kind], l)
						})
					}
				}
				if w := want[kind]; w != nil && l != *w {
					res.smp.Wrongly(func() string {
						return fmt.Sprintf("%q and %q (%d span-aware filters installed): a span %s took %v locks, want %v",
							logsList, otelList, class, opNames[kind], l, *w)
					})
				}
				if r.IntN(3) == 0 {
					s.Yield()
				}
				return true
			}
			for range rounds {
				ctx := context.Background()
				var conn, poll *logfilter.Span
				startedConn := op(opStart, true, func() { conn = spans.Start("buzz_relay", "conn", slog.Int("task", task)) })
				inConn := op(opEnter, startedConn, func() { ctx = conn.Enter(ctx) })
				startedPoll := op(opStart, true, func() { poll = spans.Start("buzz_relay::conn", "poll") })
				inPoll := op(opEnter, startedPoll, func() { ctx = poll.Enter(ctx) })
				op(opLog, true, func() {
					logger.Log(ctx, levelTrace-4, "filtered out")
					logger.Debug("outside, filtered out")
				})
				if inShared > 0 {
					s.Probe("lf/enter-while-another-task-is-inside-the-shared-span")
				}
				sharedToo := op(opEnter, true, func() { ctx = shared.Enter(ctx) })
				if sharedToo {
					inShared++
				}
				op(opLog, true, func() { logger.Log(ctx, levelTrace-4, "filtered out") })
				if op(opExit, sharedToo, func() { ctx = shared.Exit(ctx) }) {
					inShared--
				}
				op(opExit, inPoll, func() { ctx = poll.Exit(ctx) })
				op(opExit, inConn, func() { ctx = conn.Exit(ctx) })
				op(opClose, startedPoll, func() { poll.Close() })
				op(opClose, startedConn, func() { conn.Close() })
			}
		})
	}
	if err := wg.Wait(context.Background()); err != nil {
		return err
	}
	c.do(&misc, func() { shared.Close() })
	if c.Unattributed != (locks{}) {
		return fmt.Errorf("the check attributed no operation to %v lock acquisitions: its counts are not per operation", c.Unattributed)
	}
	res.mutexes[class] += c.Mutexes
	if class == 0 && (c.Mutexes != 0 || misc != (locks{})) {
		res.smp.Wrongly(func() string {
			return fmt.Sprintf("%q and %q: the target path created %d locks and took %v outside the tasks", logsList, otelList, c.Mutexes, misc)
		})
	}
	return nil
}

// lf5Begin records a span operation's invocation in the run's record (and
// counts it), building no text unless the run records; lf5End its return.
func lf5Begin(s *sim.Sim, task, kind int) record.EventID {
	if !s.Recording() {
		s.OpBegin("")
		return record.NoEvent
	}
	return s.OpBegin("task %d: %s", task, opNames[kind])
}

func lf5End(s *sim.Sim, ev record.EventID, l locks) {
	if ev != record.NoEvent {
		s.OpEnd(ev, "%v locks", l)
	}
}

// TestLF5_TargetPathTakesNoLock checks LF-5 under the simulator: entering
// and leaving a span costs 0 lock acquisitions on the target path, where
// the span-aware filter takes its read lock on each, one per installed
// span-aware filter: 2 with logs and telemetry. Locks are counted from
// outside the package, by an rt.Runtime wrapper around the simulator that
// counts every acquisition of every lock the filters create and attributes
// it to the operation in progress on the task that took it, whatever the
// interleaving. Each configuration runs four tasks that create, enter
// (their own spans and one shared by all), log events both filters drop,
// exit and close spans, interleaved at every lock. The figure is the most
// locks a target-path enter or exit took (the table's 0); every span-aware
// enter and exit must take exactly its read locks and no write lock, and
// logging takes no lock on either path. The speed this buys is measured by
// BenchmarkLF5_SpanEnterExit.
func TestLF5_TargetPathTakesNoLock(t *testing.T) {
	zero := claims.Get("LF-5", "target path locks per span enter or exit")
	two := claims.Get("LF-5", "span-aware read locks per span enter or exit")
	// The table's figure is for the two filters of the source text, one
	// read lock each.
	perFilter := two.Int() / 2
	claims.Run(t, claims.Check[lf5Result]{
		Claim: "LF-5", Bound: zero.Name, Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (lf5Result, error) { return flyLF5(s, b.Int(), perFilter) },
		Sample: func(r lf5Result) claims.Sample {
			smp := r.smp
			smp.Tally, smp.Peak = encodeExtents(r.ops, r.mutexes)
			return smp
		},
		Measured: func(o claims.Outcome) string {
			ops, mutexes := decodeExtents(o)
			t0, t1, t2 := ops[0], ops[1], ops[2]
			return fmt.Sprintf("target path: at most %s lock acquisitions per span enter or exit (%s read and %d write per enter, %s read per exit, over %d enters and %d exits; %d locks created; logging %s); span-aware with logs and telemetry: %s read locks per enter and %s per exit (%d enters, %d exits, at most %d write locks at either); one span-aware filter: %s per enter, %s per exit; %d of %d counted operations off; %s",
				o.WorstText(), t0[opEnter].reads(), t0[opEnter].max.W, t0[opExit].reads(), t0[opEnter].n, t0[opExit].n, mutexes[0],
				logLocks(t0[opLog], t1[opLog], t2[opLog]),
				t2[opEnter].reads(), t2[opExit].reads(), t2[opEnter].n, t2[opExit].n, max(t2[opEnter].max.W, t2[opExit].max.W),
				t1[opEnter].reads(), t1[opExit].reads(), o.Wrong, countOps(ops), o.SeedsText())
		},
		Note: fmt.Sprintf("counted by a counting rt.Runtime around the simulator, per operation and task; the span-aware figure is the table's %s; speed: go test ./scenarios/lf -run '^$' -bench BenchmarkLF5_SpanEnterExit (8 goroutines, both paths in the same run, reports the ratio)", two),
		Probes: []claims.Probe{
			{Name: "lf/rlock-while-another-task-reads", What: "a span enter or exit took a filter's read lock while another task held it", Min: 10},
			{Name: "lf/rlock-behind-a-writer", What: "a span enter or exit took a filter's read lock while a span's creation or close held or waited for the write lock", Min: 10},
			{Name: "lf/enter-while-another-task-is-inside-the-shared-span", What: "a task entered the shared span while another task was inside it", Min: 10},
		},
	})
}

// flyLF5 is one seed of LF-5's check: every configuration of lf5Configs,
// the target path wanted at zero locks per span enter and exit, a
// span-aware filter at perFilter read locks each.
func flyLF5(s *sim.Sim, zero, perFilter int64) (lf5Result, error) {
	var res lf5Result
	for _, cfg := range lf5Configs {
		class := awareFilters(cfg.logs, cfg.otel, cfg.forced)
		perOp := &locks{R: zero}
		if class > 0 {
			perOp = &locks{R: int64(class) * perFilter}
		}
		var want [numOps]*locks
		want[opEnter], want[opExit], want[opLog] = perOp, perOp, &locks{}
		if class == 0 {
			want[opStart], want[opClose] = &locks{}, &locks{}
		}
		for _, reversed := range lf5Orders(s, cfg.otel != "") {
			if err := lf5Fly(s, &res, cfg.logs, cfg.otel, cfg.forced, reversed, want, class); err != nil {
				return res, fmt.Errorf("%s (installed in reverse: %v): %w", cfg.name, reversed, err)
			}
		}
	}
	if res.smp.Wrong > 0 {
		return res, fmt.Errorf("LF-5: %s", res.smp.Witness)
	}
	return res, nil
}

// encodeExtents puts a seed's lock counts into a sample's Tally (sums) and
// Peak (maxima; a minimum as the maximum of its negation), so that they
// merge over seeds, also across the shards of a sweep.
func encodeExtents(ops [3][numOps]extent, mutexes [3]int) (map[string]int64, map[string]float64) {
	tally, peak := map[string]int64{}, map[string]float64{}
	for class := range ops {
		tally[fmt.Sprintf("%d.mutexes", class)] = int64(mutexes[class])
		for op, e := range ops[class] {
			if e.n == 0 {
				continue
			}
			k := fmt.Sprintf("%d.%s", class, opNames[op])
			tally[k+".n"] = e.n
			peak[k+".maxR"], peak[k+".maxW"] = float64(e.max.R), float64(e.max.W)
			peak[k+".-minR"], peak[k+".-minW"] = -float64(e.min.R), -float64(e.min.W)
		}
	}
	return tally, peak
}

// decodeExtents is the inverse over the merged outcome.
func decodeExtents(o claims.Outcome) (ops [3][numOps]extent, mutexes [3]int) {
	for class := range ops {
		mutexes[class] = int(o.Tally[fmt.Sprintf("%d.mutexes", class)])
		for op := range ops[class] {
			k := fmt.Sprintf("%d.%s", class, opNames[op])
			n := o.Tally[k+".n"]
			if n == 0 {
				continue
			}
			ops[class][op] = extent{n: n,
				max: locks{R: int64(o.Peak[k+".maxR"]), W: int64(o.Peak[k+".maxW"])},
				min: locks{R: -int64(o.Peak[k+".-minR"]), W: -int64(o.Peak[k+".-minW"])}}
		}
	}
	return ops, mutexes
}

// logLocks says how many locks a logged event took, on every path.
func logLocks(es ...extent) string {
	var most int64
	var n int64
	for _, e := range es {
		most = max(most, e.max.R+e.max.W)
		n += e.n
	}
	return fmt.Sprintf("at most %d locks over %d logging steps on any path", most, n)
}

func countOps(ops [3][numOps]extent) int64 {
	var n int64
	for _, class := range ops {
		for _, e := range class {
			n += e.n
		}
	}
	return n
}

package sim

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

type evKind uint8

const (
	evRun   evKind = iota + 1 // a scheduling decision: task runs
	evSpawn                   // a task started (text: its name)
	evDone                    // a task ended
	evClock                   // virtual time jumped to the next timer
	evNote                    // a world event (text)
)

// traceEvent is one line of the trace. Decisions are the bulk of a trace, so an
// event is a small fixed struct and text is only formatted for a report.
type traceEvent struct {
	step int64
	at   int64
	task int32
	kind evKind
	obj  int32
	text int32 // index into trace.texts, -1 for none: keeps the hot-path struct pointer-free
}

// trace keeps a rolling hash of every event, the last few events for the
// failure report, optionally every decision (for replay) and optionally a
// full text stream.
type trace struct {
	hash      uint64
	ring      []traceEvent // power-of-two ring of the last events
	ringMask  int64
	texts     []string // ring of the texts of the last events that have one
	textNext  int32
	count     int64
	out       *bufio.Writer
	names     func(int32) string
	tailLen   int
	decisions []int32
	record    bool
	slow      bool // record || out != nil
}

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// tailDepth is how many times Config.TraceTail events the ring keeps: the
// tail leaves out the main task's run steps, which are most of a run's last
// events when main drives the workload or checks at the end, and still
// finds the other tasks' last events among the older ones.
const tailDepth = 8

// mainTask is the root task's id: the task Run starts first.
const mainTask = 0

func (tr *trace) init(tail int, out io.Writer, record bool) {
	tr.hash = fnvOffset
	size := 1
	for size < tail*tailDepth {
		size *= 2
	}
	tr.ring = make([]traceEvent, size)
	tr.ringMask = int64(size - 1)
	tr.texts = make([]string, size)
	tr.tailLen = tail
	if out != nil {
		tr.out = bufio.NewWriter(out)
	}
	tr.record = record
	tr.slow = record || out != nil
}

func mix(h, v uint64) uint64 {
	h ^= v
	h *= fnvPrime
	h ^= h >> 29
	return h
}

// decision is the hot path: one per scheduling step. It stays small enough
// to inline; recording decisions and streaming text are off the fast path.
func (tr *trace) decision(step, at int64, task int32) {
	tr.hash = mix(tr.hash, uint64(task)<<8|uint64(evRun))
	// Field by field: a composite literal is built on the stack and copied
	// in 16-byte moves that stall on the stores that just built it.
	e := &tr.ring[tr.count&tr.ringMask]
	e.step, e.at, e.task, e.kind, e.obj, e.text = step, at, task, evRun, 0, -1
	tr.count++
	if tr.slow {
		tr.decisionSlow(task)
	}
}

// clockJumped marks the clock event of a step that ran no task (its obj).
const clockJumped int32 = 1

// jump records a step that ran no task (Sim.jumpClock): a clock event in
// the trace, ClockDecision in the decision list.
func (tr *trace) jump(step, at int64) {
	tr.event(step, at, evClock, -1, clockJumped, "")
	if tr.record {
		tr.decisions = append(tr.decisions, ClockDecision)
	}
}

func (tr *trace) decisionSlow(task int32) {
	if tr.record {
		tr.decisions = append(tr.decisions, task)
	}
	if tr.out != nil {
		tr.writeOut(tr.ring[(tr.count-1)&tr.ringMask])
	}
}

func (tr *trace) event(step, at int64, kind evKind, task, obj int32, text string) {
	h := mix(tr.hash, uint64(uint32(task))<<8|uint64(kind))
	h = mix(h, uint64(at))
	for i := 0; i < len(text); i++ {
		h = mix(h, uint64(text[i]))
	}
	tr.hash = h
	ti := int32(-1)
	if text != "" {
		ti = tr.textNext
		tr.texts[ti] = text
		tr.textNext = (tr.textNext + 1) & int32(tr.ringMask)
	}
	e := &tr.ring[tr.count&tr.ringMask]
	e.step, e.at, e.task, e.kind, e.obj, e.text = step, at, task, kind, obj, ti
	tr.count++
	if tr.out != nil {
		tr.writeOut(*e)
	}
}

func (tr *trace) writeOut(e traceEvent) {
	tr.out.WriteString(tr.format(e))
	tr.out.WriteByte('\n')
}

func (tr *trace) textOf(e traceEvent) string {
	if e.text < 0 {
		return ""
	}
	return tr.texts[e.text]
}

func (tr *trace) format(e traceEvent) string {
	name := ""
	if e.task >= 0 && tr.names != nil {
		name = tr.names(e.task)
	}
	at := time.Duration(e.at)
	switch e.kind {
	case evRun:
		return fmt.Sprintf("step %-8d +%-14v run   %d %s", e.step, at, e.task, name)
	case evSpawn:
		return fmt.Sprintf("step %-8d +%-14v spawn %d %s", e.step, at, e.task, tr.textOf(e))
	case evDone:
		return fmt.Sprintf("step %-8d +%-14v done  %d %s", e.step, at, e.task, name)
	case evClock:
		if e.obj == clockJumped {
			return fmt.Sprintf("step %-8d +%-14v clock jumps to the next timer (no task ran)", e.step, at)
		}
		return fmt.Sprintf("step %-8d +%-14v clock", e.step, at)
	case evNote:
		who := "world"
		if e.task >= 0 {
			who = fmt.Sprintf("%d %s", e.task, name)
		}
		return fmt.Sprintf("step %-8d +%-14v note  [%s] %s", e.step, at, who, tr.textOf(e))
	}
	return fmt.Sprintf("step %d ? kind %d", e.step, e.kind)
}

// tail returns the last TraceTail events that a person debugging reads,
// oldest first, formatted, and its header's words: which stretch of the run
// they cover and what was left out. The main task's run steps are left out
// when other tasks have events in the ring (its notes stay, and so does the
// run's last event, where it failed). Texts live in their own ring of the
// same size, so every event in the tail still has its text.
func (tr *trace) tail() (lines []string, about string) {
	avail := min(int64(len(tr.ring)), tr.count)
	first := tr.count - avail
	others := false
	for i := first; i < tr.count && !others; i++ {
		others = tr.ring[i&tr.ringMask].task != mainTask
	}
	// Walking back from the newest event; a stretch of main's run steps
	// left out between two events shown becomes one line that says so
	// (and takes a line of the tail).
	type item struct {
		i          int64 // the event's index, or -1 for a stretch left out
		n          int   // the stretch's run steps
		from, till int64 // its first and last step
	}
	var picked []item // newest first
	shown, skipped, pending := 0, 0, 0
	var pendFrom, pendTill int64
	for i := tr.count - 1; i >= first && len(picked) < tr.tailLen; i-- {
		e := tr.ring[i&tr.ringMask]
		if others && e.kind == evRun && e.task == mainTask && i != tr.count-1 {
			if pending == 0 {
				pendTill = e.step
			}
			pending++
			pendFrom = e.step
			continue
		}
		if pending > 0 {
			picked = append(picked, item{i: -1, n: pending, from: pendFrom, till: pendTill})
			skipped += pending
			pending = 0
			if len(picked) == tr.tailLen {
				break
			}
		}
		picked = append(picked, item{i: i})
		shown++
	}
	oldest := tr.count
	lines = make([]string, 0, len(picked))
	var tasks []int32
	for k := len(picked) - 1; k >= 0; k-- {
		it := picked[k]
		if it.i < 0 {
			what := fmt.Sprintf("%d run steps of %s (steps %d to %d)", it.n, tr.name(mainTask), it.from, it.till)
			if it.n == 1 {
				what = fmt.Sprintf("1 run step of %s (step %d)", tr.name(mainTask), it.from)
			}
			lines = append(lines, "… "+what+" left out …")
			continue
		}
		oldest = min(oldest, it.i)
		e := tr.ring[it.i&tr.ringMask]
		lines = append(lines, tr.format(e))
		if e.task >= 0 && !slices.Contains(tasks, e.task) {
			tasks = append(tasks, e.task)
		}
	}
	if shown == 0 {
		return lines, fmt.Sprintf("none of %d events", tr.count)
	}
	covered := tr.count - oldest
	about = fmt.Sprintf("last %d of %d events", covered, tr.count)
	if skipped > 0 {
		about += fmt.Sprintf(", %d shown: %d run steps of %s among them left out", shown, skipped, tr.name(mainTask))
	}
	if len(tasks) > 0 {
		slices.Sort(tasks)
		names := make([]string, len(tasks))
		for k, id := range tasks {
			names[k] = tr.name(id)
		}
		about += "; tasks " + strings.Join(names, ", ")
	}
	return lines, about
}

// name is a task's name, or its id where the trace knows no names.
func (tr *trace) name(id int32) string {
	if tr.names != nil {
		if n := tr.names(id); n != "" {
			return n
		}
	}
	return fmt.Sprintf("task %d", id)
}

func (tr *trace) flush() {
	if tr.out != nil {
		_ = tr.out.Flush()
	}
}

package sim

import (
	"bufio"
	"fmt"
	"io"
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

func (tr *trace) init(tail int, out io.Writer, record bool) {
	tr.hash = fnvOffset
	size := 1
	for size < tail {
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

// tail returns the last TraceTail events, oldest first, formatted. Texts
// live in their own ring of the same size, so every event in the tail still
// has its text.
func (tr *trace) tail() []string {
	n := min(int64(tr.tailLen), tr.count)
	out := make([]string, 0, n)
	for i := tr.count - n; i < tr.count; i++ {
		out = append(out, tr.format(tr.ring[i&tr.ringMask]))
	}
	return out
}

func (tr *trace) flush() {
	if tr.out != nil {
		_ = tr.out.Flush()
	}
}

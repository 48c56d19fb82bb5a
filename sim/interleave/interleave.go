// Package interleave prints a run's record the way a person reasons about
// an interleaving, after Lincheck: first the scenario (each task's
// operations and their answers), then a table with one column per task
// that took part, one row per event in execution order with its virtual
// time and step: locks taken and released, client operations and their
// answers, the database's statements with their snapshot instants, the
// messages and their fates, the faults, and the preemptions. Tasks that
// only ran are folded away, and so are runs of rows with nothing to read
// when the table is long. Rows a check blamed are marked ✗ with what it
// said; the failure closes the table.
package interleave

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/windtunnel/windtunnel/sim"
)

// Options shape a table.
type Options struct {
	// MaxRows bounds the table (0: DefaultMaxRows): past it, rows far
	// from a blamed event and from the end are folded into one line that
	// says how many.
	MaxRows int
	// CellWidth bounds a column (0: DefaultCellWidth); longer texts are
	// cut with "…".
	CellWidth int
	// Failure is the run's failure text, printed as the last row.
	Failure string
	// FailureStep is the step the run failed at (0: unknown).
	FailureStep int64
}

// Defaults for Options.
const (
	DefaultMaxRows   = 120
	DefaultCellWidth = 34
)

// row is one line of the table: an event (or a folded pair) on a task.
type row struct {
	e      sim.Event
	col    int
	text   string
	blamed bool
}

// Write prints the scenario and the interleaving table of rec.
func Write(w io.Writer, rec *sim.Record, opt Options) error {
	if rec == nil {
		return fmt.Errorf("interleave: no record (run with sim.Config{Record: true})")
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = DefaultMaxRows
	}
	if opt.CellWidth <= 0 {
		opt.CellWidth = DefaultCellWidth
	}
	cols, folded := columns(rec)
	b := &strings.Builder{}
	writeScenario(b, rec, cols)
	rows := rowsOf(rec, cols)
	fmt.Fprintf(b, "\ninterleaving: %d events in execution order", len(rows))
	if len(folded) > 0 {
		fmt.Fprintf(b, "; %d tasks that only ran folded away (%s)", len(folded), clip(strings.Join(folded, ", "), 80))
	}
	b.WriteString("\n")
	writeTable(b, rec, cols, rows, opt)
	if rec.Cut {
		b.WriteString("(the record hit its size limit: later events are missing)\n")
	}
	if opt.Failure != "" {
		first, _, _ := strings.Cut(opt.Failure, "\n")
		at := ""
		if opt.FailureStep > 0 {
			at = fmt.Sprintf(" at step %d", opt.FailureStep)
		}
		fmt.Fprintf(b, "✗ failed%s: %s\n", at, first)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is Write into a string.
func String(rec *sim.Record, opt Options) string {
	var b strings.Builder
	if err := Write(&b, rec, opt); err != nil {
		return err.Error()
	}
	return b.String()
}

// column is a task that took part, or the world (id -1).
type column struct {
	id   int32
	name string
}

// matters reports whether an event is worth a row: everything but the
// scheduler's bookkeeping (a switch that preempts nobody, a spawn, an
// end).
func matters(e sim.Event) bool {
	switch e.Kind {
	case sim.EventSpawn, sim.EventDone:
		return false
	case sim.EventSwitch:
		return e.Ref >= 0 // a preemption
	case sim.EventWait:
		// Waiting for a lock is part of the interleaving; sleeping, or a
		// worker waiting for its next message, is not.
		return strings.Contains(e.Text, "Lock")
	}
	return true
}

// echoes reports whether a note repeats, in words, a structured event of
// the same task and step (the database and the bus trace what they also
// record as intervals and messages): the table shows the structured one.
func echoes(evs []sim.Event, i int) bool {
	e := evs[i]
	if e.Kind != sim.EventNote {
		return false
	}
	for _, j := range []int{i - 1, i + 1} {
		if j < 0 || j >= len(evs) {
			continue
		}
		o := evs[j]
		if o.Task == e.Task && o.Step == e.Step {
			switch o.Kind {
			case sim.EventInterval, sim.EventSend, sim.EventReceive, sim.EventLost, sim.EventFault:
				return true
			}
		}
	}
	return false
}

// columns lists the tasks with an event that matters, in id order, the
// world first; and the names of the ones folded away.
func columns(rec *sim.Record) ([]column, []string) {
	// A task whose only rows would be preemptions ran nothing a person
	// needs to read: it is folded with the tasks that only ran.
	// So is one that only waited (main, waiting for its workers).
	active := map[int32]bool{}
	for _, e := range rec.Events {
		if matters(e) && e.Kind != sim.EventSwitch && e.Kind != sim.EventWait {
			active[e.Task] = true
		}
	}
	var cols []column
	if active[-1] {
		cols = append(cols, column{-1, "world"})
	}
	var folded []string
	for id, name := range rec.Tasks {
		if active[int32(id)] {
			cols = append(cols, column{int32(id), name})
		} else {
			folded = append(folded, name)
		}
	}
	return cols, folded
}

func colOf(cols []column, task int32) int {
	for i, c := range cols {
		if c.id == task {
			return i
		}
	}
	return -1
}

// rowsOf turns the record into rows, folding a lock taken and released
// with nothing in between into one row.
func rowsOf(rec *sim.Record, cols []column) []row {
	var rows []row
	evs := rec.Events
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		c := colOf(cols, e.Task)
		if !shown(cols, e) || echoes(evs, i) {
			continue
		}
		text := describe(e)
		if (e.Kind == sim.EventLock || e.Kind == sim.EventRLock) && e.Blame == "" {
			if j := nextOnTask(cols, evs, i); j > 0 && releases(e, evs[j]) && evs[j].Blame == "" {
				verb := "lock+unlock"
				if e.Kind == sim.EventRLock {
					verb = "rlock+runlock"
				}
				text = verb + " " + e.Object
				i = j
			}
		}
		rows = append(rows, row{e: e, col: c, text: text, blamed: e.Blame != ""})
	}
	return rows
}

// shown reports whether an event gets a row: it matters, its task has a
// column, and a preemption is of a task with a column (preempting a folded
// task is the scheduler's business).
func shown(cols []column, e sim.Event) bool {
	if !matters(e) || colOf(cols, e.Task) < 0 {
		return false
	}
	return e.Kind != sim.EventSwitch || colOf(cols, int32(e.Ref)) >= 0
}

// nextOnTask is the index of the next event that matters, if it is on the
// same task with no event of another task in between.
func nextOnTask(cols []column, evs []sim.Event, i int) int {
	for j := i + 1; j < len(evs); j++ {
		if !shown(cols, evs[j]) {
			continue
		}
		if evs[j].Task != evs[i].Task {
			return -1
		}
		return j
	}
	return -1
}

func releases(acq, e sim.Event) bool {
	return e.Object == acq.Object &&
		(acq.Kind == sim.EventLock && e.Kind == sim.EventUnlock || acq.Kind == sim.EventRLock && e.Kind == sim.EventRUnlock)
}

// describe is an event's cell text.
func describe(e sim.Event) string { return e.String() }

// writeScenario lists each task's operations with their answers, the
// minimal scenario Lincheck prints above its table.
func writeScenario(b *strings.Builder, rec *sim.Record, cols []column) {
	type op struct{ begin, end string }
	type at struct {
		task int32
		i    int
	}
	ops := map[int32][]op{}
	open := map[int64]at{} // an operation's ref -> where its row is
	n := 0
	for _, e := range rec.Events {
		switch e.Kind {
		case sim.EventOpBegin:
			open[e.Ref] = at{e.Task, len(ops[e.Task])}
			ops[e.Task] = append(ops[e.Task], op{begin: e.Text, end: "(no answer)"})
			n++
		case sim.EventOpEnd:
			if w, ok := open[e.Ref]; ok {
				ops[w.task][w.i].end = e.Text
			}
		}
	}
	tasks := 0
	for _, c := range cols {
		if len(ops[c.id]) > 0 {
			tasks++
		}
	}
	fmt.Fprintf(b, "scenario: %d operations on %d tasks\n", n, tasks)
	for _, c := range cols {
		for i, o := range ops[c.id] {
			who := ""
			if i == 0 {
				who = c.name
			}
			fmt.Fprintf(b, "  %-16s %s -> %s\n", clip(who, 16), o.begin, o.end)
		}
	}
}

// writeTable prints the rows, folding the middle of a long table.
func writeTable(b *strings.Builder, rec *sim.Record, cols []column, rows []row, opt Options) {
	keep := visible(rows, opt.MaxRows)
	width := opt.CellWidth
	colW := make([]int, len(cols))
	for i, c := range cols {
		colW[i] = min(max(utf8.RuneCountInString(c.name), 6), width)
	}
	for i, r := range rows {
		if keep[i] {
			colW[r.col] = min(max(colW[r.col], utf8.RuneCountInString(r.text)), width)
		}
	}
	fmt.Fprintf(b, "%5s %-14s %-8s", "row", "time", "step")
	for i, c := range cols {
		fmt.Fprintf(b, " | %s", pad(clip(c.name, colW[i]), colW[i]))
	}
	b.WriteString("\n")
	rule := 5 + 1 + 14 + 1 + 8
	for _, w := range colW {
		rule += 3 + w
	}
	b.WriteString(strings.Repeat("-", rule) + "\n")
	skipped := 0
	for i, r := range rows {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(b, "%5s … %d rows folded …\n", "", skipped)
			skipped = 0
		}
		mark := " "
		if r.blamed {
			mark = "✗"
		}
		fmt.Fprintf(b, "%s%4d +%-13v %-8d", mark, i+1, r.e.At, r.e.Step)
		for c := range cols {
			cell := ""
			if c == r.col {
				cell = clip(r.text, colW[c])
			}
			fmt.Fprintf(b, " | %s", pad(cell, colW[c]))
		}
		b.WriteString("\n")
		if r.blamed {
			fmt.Fprintf(b, "%5s   ^ %s\n", "", r.e.Blame)
		}
	}
	if skipped > 0 {
		fmt.Fprintf(b, "%5s … %d rows folded …\n", "", skipped)
	}
}

// visible chooses the rows to print: all of them if they fit, else the
// rows around every blamed event, the first few and the last ones.
func visible(rows []row, max int) []bool {
	keep := make([]bool, len(rows))
	if len(rows) <= max {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	const around = 4
	var blamed []int
	for i, r := range rows {
		if r.blamed {
			blamed = append(blamed, i)
		}
	}
	budget := max
	mark := func(from, to int) {
		for i := from; i < to && budget > 0; i++ {
			if i >= 0 && i < len(rows) && !keep[i] {
				keep[i] = true
				budget--
			}
		}
	}
	// The end (the failure's neighbourhood) first, then each blamed row,
	// the latest first, then the beginning.
	mark(len(rows)-max/3, len(rows))
	slices.Reverse(blamed)
	for _, i := range blamed {
		mark(i-around, i+around+1)
	}
	mark(0, budget)
	return keep
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

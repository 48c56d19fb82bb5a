// Package interleave prints a run's record the way a person reasons about
// an interleaving, after Lincheck. First comes the scenario (each task's
// operations and their answers). Then comes a table with one column per
// task that took part, one row per event in execution order with its
// virtual time and step. Its events are the locks taken and released, the
// client operations and their answers, the database's statements with
// their snapshot instants, the messages and their fates, the faults, and
// the preemptions. Tasks that only ran are folded away, and so are runs of
// rows with nothing to read when the table is long. Rows a check blamed are
// marked ✗ with what it said; the failure closes the table.
package interleave

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/windtunnel/windtunnel/sim/record"
)

// Options shape a table.
type Options struct {
	// MaxRows bounds the table (0: DefaultMaxRows): past it, rows far
	// from a blamed event and from the end are folded into one line that
	// says how many.
	MaxRows int
	// CellWidth bounds a column (0: DefaultCellWidth); a longer text
	// folds onto continuation lines, never cut.
	CellWidth int
	// Width bounds every line of the output, in runes (0: DefaultWidth):
	// columns narrow to fit it and their texts fold. With more tasks than
	// columns of a readable width fit, the table names each row's task
	// instead of giving each task a column.
	Width int
	// Failure is the run's failure text, printed as the last row.
	Failure string
	// FailureStep is the step the run failed at (0: unknown).
	FailureStep int64
}

// Defaults for Options.
const (
	DefaultMaxRows   = 120
	DefaultCellWidth = 34
	DefaultWidth     = 120
)

// minColumn is the narrowest a task's column gets. Below it the table
// names each row's task instead (a column of a few runes folds every text
// into a tower nobody reads).
const minColumn = 8

// row is one line of the table: an event (or a folded pair) on a task.
type row struct {
	e      record.Event
	col    int
	text   string
	blamed bool
}

// Write prints the scenario and the interleaving table of rec.
func Write(w io.Writer, rec *record.Record, opt Options) error {
	if rec == nil {
		return fmt.Errorf("interleave: no record (run with sim.Config{Record: true})")
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = DefaultMaxRows
	}
	if opt.CellWidth <= 0 {
		opt.CellWidth = DefaultCellWidth
	}
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	cols, folded := columns(rec)
	b := &strings.Builder{}
	writeScenario(b, rec, cols, opt.Width)
	rows := rowsOf(rec, cols)
	head := fmt.Sprintf("interleaving: %d events in execution order", len(rows))
	if len(folded) > 0 {
		head += fmt.Sprintf("; %d tasks that only ran folded away (%s)", len(folded), strings.Join(folded, ", "))
	}
	b.WriteString("\n")
	writeFolded(b, "", "  ", head, opt.Width)
	writeTable(b, cols, rows, opt)
	if rec.Cut {
		b.WriteString("(the record hit its size limit: later events are missing)\n")
	}
	if opt.Failure != "" {
		first, _, _ := strings.Cut(opt.Failure, "\n")
		at := ""
		if opt.FailureStep > 0 {
			at = fmt.Sprintf(" at step %d", opt.FailureStep)
		}
		writeFolded(b, "", "  ", fmt.Sprintf("✗ failed%s: %s", at, first), opt.Width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is Write into a string.
func String(rec *record.Record, opt Options) string {
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
func matters(e record.Event) bool {
	switch e.Kind {
	case record.EventSpawn, record.EventDone:
		return false
	case record.EventSwitch:
		return e.Ref >= 0 // a preemption
	case record.EventWait:
		// Waiting for a lock is part of the interleaving; sleeping, or a
		// worker waiting for its next message, is not.
		return strings.Contains(e.Text, "Lock")
	}
	return true
}

// echoes reports whether a note repeats, in words, a structured event of
// the same task and step (the database and the bus trace what they also
// record as intervals and messages). The table shows the structured one.
func echoes(evs []record.Event, i int) bool {
	e := evs[i]
	if e.Kind != record.EventNote {
		return false
	}
	for _, j := range []int{i - 1, i + 1} {
		if j < 0 || j >= len(evs) {
			continue
		}
		o := evs[j]
		if o.Task == e.Task && o.Step == e.Step {
			switch o.Kind {
			case record.EventInterval, record.EventSend, record.EventReceive, record.EventLost, record.EventFault:
				return true
			}
		}
	}
	return false
}

// columns lists the tasks with an event that matters, in id order, the
// world first, and the names of the ones folded away. Tasks of the same
// name get distinct names, by a suffix in id order ("race-prime",
// "race-prime#2"), so that a column, a scenario line and the folded list
// each name one task.
func columns(rec *record.Record) ([]column, []string) {
	// A task whose only rows would be preemptions ran nothing a person
	// needs to read: it is folded with the tasks that only ran.
	// So is one that only waited (main, waiting for its workers).
	active := map[int32]bool{}
	for _, e := range rec.Events {
		if matters(e) && e.Kind != record.EventSwitch && e.Kind != record.EventWait {
			active[e.Task] = true
		}
	}
	var cols []column
	if active[-1] {
		cols = append(cols, column{-1, "world"})
	}
	var folded []string
	for id, name := range distinctNames(rec.Tasks) {
		if active[int32(id)] {
			cols = append(cols, column{int32(id), name})
		} else {
			folded = append(folded, name)
		}
	}
	return cols, folded
}

// distinctNames suffixes the second and later tasks of a name with #2,
// #3, …, skipping a suffixed name some task already has.
func distinctNames(names []string) []string {
	taken := make(map[string]bool, len(names)) // lookups only
	for _, n := range names {
		taken[n] = true
	}
	seen := map[string]int{} // lookups only
	out := make([]string, len(names))
	for i, n := range names {
		seen[n]++
		out[i] = n
		if seen[n] == 1 {
			continue
		}
		for k := seen[n]; k <= len(names)+1; k++ {
			if c := fmt.Sprintf("%s#%d", n, k); !taken[c] {
				out[i], taken[c] = c, true
				break
			}
		}
	}
	return out
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
func rowsOf(rec *record.Record, cols []column) []row {
	var rows []row
	evs := rec.Events
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		c := colOf(cols, e.Task)
		if !shown(cols, e) || echoes(evs, i) {
			continue
		}
		text := describe(e)
		if e.Kind == record.EventSwitch {
			// By its column's name: the record's names may be shared.
			text = "▶ preempts " + cols[colOf(cols, int32(e.Ref))].name
		}
		if (e.Kind == record.EventLock || e.Kind == record.EventRLock) && e.Blame == "" {
			if j := nextOnTask(cols, evs, i); j > 0 && releases(e, evs[j]) && evs[j].Blame == "" {
				verb := "lock+unlock"
				if e.Kind == record.EventRLock {
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

// shown reports whether an event gets a row. It does when it matters, its
// task has a column, and a preemption is of a task with a column
// (preempting a folded task is the scheduler's business).
func shown(cols []column, e record.Event) bool {
	if !matters(e) || colOf(cols, e.Task) < 0 {
		return false
	}
	return e.Kind != record.EventSwitch || colOf(cols, int32(e.Ref)) >= 0
}

// nextOnTask is the index of the next event that matters, if it is on the
// same task with no event of another task in between.
func nextOnTask(cols []column, evs []record.Event, i int) int {
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

func releases(acq, e record.Event) bool {
	return e.Object == acq.Object &&
		(acq.Kind == record.EventLock && e.Kind == record.EventUnlock || acq.Kind == record.EventRLock && e.Kind == record.EventRUnlock)
}

// describe is an event's cell text.
func describe(e record.Event) string { return e.String() }

// writeScenario lists each task's operations with their answers, the
// minimal scenario Lincheck prints above its table.
func writeScenario(b *strings.Builder, rec *record.Record, cols []column, width int) {
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
		case record.EventOpBegin:
			open[e.Ref] = at{e.Task, len(ops[e.Task])}
			ops[e.Task] = append(ops[e.Task], op{begin: e.Text, end: "(no answer)"})
			n++
		case record.EventOpEnd:
			if w, ok := open[e.Ref]; ok {
				ops[w.task][w.i].end = e.Text
			}
		}
	}
	tasks := 0
	nameW := 16
	for _, c := range cols {
		if len(ops[c.id]) > 0 {
			tasks++
			nameW = max(nameW, runes(c.name))
		}
	}
	// A name too long to leave room for its operations goes on a line of
	// its own above them.
	nameW = min(nameW, width/4)
	fmt.Fprintf(b, "scenario: %d operations on %d tasks\n", n, tasks)
	indent := strings.Repeat(" ", 2+nameW+1)
	for _, c := range cols {
		for i, o := range ops[c.id] {
			who := ""
			if i == 0 {
				who = c.name
			}
			if runes(who) > nameW {
				writeFolded(b, "  ", "  ", who, width)
				who = ""
			}
			writeFolded(b, "  "+pad(who, nameW)+" ", indent+"  ", o.begin+" -> "+o.end, width)
		}
	}
}

// writeTable prints the rows, folding the middle of a long table and every
// text too long for its column onto continuation lines.
func writeTable(b *strings.Builder, cols []column, rows []row, opt Options) {
	keep := visible(rows, opt.MaxRows)
	timeW, stepW := runes("time"), runes("step")
	for i, r := range rows {
		if keep[i] {
			timeW = max(timeW, runes(timeOf(r.e)))
			stepW = max(stepW, runes(fmt.Sprint(r.e.Step)))
		}
	}
	// "✗" or " ", the row number in 4, the time and the step.
	lead := 1 + 4 + 1 + timeW + 1 + stepW
	colW, ok := fit(cols, rows, keep, opt, lead)
	if !ok {
		// One column of texts, each row naming its task.
		nameW := 0
		for _, c := range cols {
			nameW = max(nameW, runes(c.name))
		}
		nameW = min(nameW, opt.CellWidth)
		colW = []int{nameW, max(opt.Width-lead-2*3-nameW, minColumn)}
		writeLines(b, fmt.Sprintf("%5s %-*s %-*s", "row", timeW, "time", stepW, "step"), lead, colW, []int{0, 1}, [][]string{{"task"}, {"event"}})
	} else {
		header := make([][]string, len(cols))
		which := make([]int, len(cols))
		for i, c := range cols {
			header[i], which[i] = fold(c.name, colW[i]), i
		}
		writeLines(b, fmt.Sprintf("%5s %-*s %-*s", "row", timeW, "time", stepW, "step"), lead, colW, which, header)
	}
	rule := lead
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
		first := fmt.Sprintf("%s%4d %-*s %-*d", mark, i+1, timeW, timeOf(r.e), stepW, r.e.Step)
		if ok {
			writeLines(b, first, lead, colW, []int{r.col}, [][]string{fold(r.text, colW[r.col])})
		} else {
			writeLines(b, first, lead, colW, []int{0, 1}, [][]string{fold(cols[r.col].name, colW[0]), fold(r.text, colW[1])})
		}
		if r.blamed {
			writeFolded(b, fmt.Sprintf("%5s   ^ ", ""), strings.Repeat(" ", 10), r.e.Blame, opt.Width)
		}
	}
	if skipped > 0 {
		fmt.Fprintf(b, "%5s … %d rows folded …\n", "", skipped)
	}
}

func timeOf(e record.Event) string { return fmt.Sprintf("+%v", e.At) }

// fit gives each task's column its width: the longest of its name and its
// texts shown, at most opt.CellWidth, narrowed (the widest first) until a
// line fits opt.Width. It reports false when the columns do not fit at
// minColumn each.
func fit(cols []column, rows []row, keep []bool, opt Options, lead int) ([]int, bool) {
	want := make([]int, len(cols))
	for i, c := range cols {
		want[i] = min(max(runes(c.name), 6), opt.CellWidth)
	}
	for i, r := range rows {
		if keep[i] {
			want[r.col] = min(max(want[r.col], runes(r.text)), opt.CellWidth)
		}
	}
	room := opt.Width - lead - 3*len(cols)
	if room < minColumn*len(cols) {
		return want, len(cols) == 0
	}
	// Water-filling: columns that want less than an even share of what is
	// left get what they want; the rest share the remainder evenly.
	w := make([]int, len(cols))
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return want[a] - want[b] })
	left := room
	for k, i := range order {
		share := left / (len(order) - k)
		w[i] = min(want[i], share)
		left -= w[i]
	}
	return w, true
}

// writeLines writes one table row that may take several lines: first (the
// lead: mark, row, time, step) on its first line, blanks on the others,
// then a cell per column, the columns in which holding texts' lines.
func writeLines(b *strings.Builder, first string, lead int, colW []int, which []int, texts [][]string) {
	n := 1
	for _, t := range texts {
		n = max(n, len(t))
	}
	for line := range n {
		var l strings.Builder
		if line == 0 {
			l.WriteString(pad(first, lead))
		} else {
			l.WriteString(strings.Repeat(" ", lead))
		}
		for c, w := range colW {
			cell := ""
			if k := slices.Index(which, c); k >= 0 && line < len(texts[k]) {
				cell = texts[k][line]
			}
			l.WriteString(" | " + pad(cell, w))
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
}

// writeFolded writes text after first, folded to width, each continuation
// line after indent.
func writeFolded(b *strings.Builder, first, indent, text string, width int) {
	w := max(width-max(runes(first), runes(indent)), minColumn)
	for i, l := range fold(text, w) {
		if i == 0 {
			b.WriteString(first + l + "\n")
		} else {
			b.WriteString(indent + l + "\n")
		}
	}
}

// fold breaks text into lines of at most w runes: at a space where it can
// (the space dropped), inside a word longer than a line where it must.
// Nothing else is dropped, so the lines joined give the text back.
func fold(text string, w int) []string {
	w = max(w, 1)
	r := []rune(text)
	var lines []string
	for range len(r) + 1 {
		if len(r) <= w {
			return append(lines, string(r))
		}
		cut, next := w, w
		if i := lastSpace(r[:w+1]); i > 0 {
			cut, next = i, i+1
		}
		lines = append(lines, string(r[:cut]))
		r = r[next:]
	}
	return lines
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

func runes(s string) int { return utf8.RuneCountInString(s) }

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

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

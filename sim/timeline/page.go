package timeline

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/windtunnel/windtunnel/sim/record"
)

// Page is what one timeline shows.
type Page struct {
	Title    string         // e.g. "TestOC2_… seed 0x… (shrunk)"
	Failure  string         // the failure text; its first line is shown prominently
	Record   *record.Record // the run's record (sim.Config{Record: true}); required, with at least one event
	Commands []string       // the commands that reproduce or replay the run, shown at the top
	Links    []Link         // related pages, relative to this one (may be none)
	// Trace is the run's formatted trace, one line each (may be nil).
	// Clicking an event shows the lines of its step ("step N ..."), so a
	// person sees what the scheduler did around it.
	Trace []string
	// Window, if set, is the bound of the claim the run broke, from the
	// claims table: the page draws it as a band from the moment the
	// violating read's value stopped being current to the bound, with the
	// read's stale interval against it.
	Window *Window
}

// Link is a related page: {Text: "porcupine visualization", Href: "porcupine.html"}.
type Link struct{ Text, Href string }

//go:embed assets/page.html assets/page.css assets/page.js
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/page.html"))

func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

var (
	pageCSS = template.CSS(asset("page.css"))
	pageJS  = template.JS(asset("page.js"))
)

// Write writes p's page to w. It returns an error, and writes nothing, for
// a nil or empty record or one whose events are not a record's (out of
// order).
func Write(w io.Writer, p Page) error {
	if err := check(p.Record); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, build(p)); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteFile writes p's page to the file path.
func WriteFile(path string, p Page) error {
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// check refuses what would draw nothing or nonsense; everything after it
// may index the record by Seq.
func check(rec *record.Record) error {
	if rec == nil {
		return errors.New("timeline: no record (run with sim.Config{Record: true})")
	}
	if len(rec.Events) == 0 {
		return errors.New("timeline: the record has no events")
	}
	for i, e := range rec.Events {
		if e.Seq != i {
			return fmt.Errorf("timeline: event %d has Seq %d (a record's events are numbered in order)", i, e.Seq)
		}
		if i > 0 && e.At < rec.Events[i-1].At {
			return fmt.Errorf("timeline: event %d at %s is before event %d at %s (virtual time only moves on)", i, at(e.At), i-1, at(rec.Events[i-1].At))
		}
	}
	return nil
}

// build lays the page out.
func build(p Page) *pageView {
	rec := p.Record
	n := len(rec.Events)
	d := draw(rec)
	lo, hi, drawn := window(d, max(maxElements-reserve, 100))
	drawn = dropRunOnly(d, drawn)
	ax := newAxes(d, drawn, lo, hi)
	groups, lanes := layout(d, drawn, lo)

	v := &pageView{Violating: -1,
		Title: p.Title, Failure: p.Failure, Commands: p.Commands, Links: p.Links,
		Style: pageCSS, Script: pageJS, Axis: ax.chosen, AxisReason: ax.reason,
		LeftOut:      leftOut(n, lo, hi),
		TimeAxisName: "virtual time", OrdAxisName: "event order",
		TimeAxisDesc: "x is virtual time since sim.Epoch",
		OrdAxisDesc:  "x is each event's place in the record (#number and virtual time in the labels)",
	}
	v.CaptionTime, v.CaptionOrd = ax.captions()
	v.Caption = v.CaptionTime
	if ax.chosen == axisOrdinal {
		v.Caption = v.CaptionOrd
	}
	if v.Title == "" {
		v.Title = "timeline"
	}
	v.FailureFirst, _, _ = strings.Cut(strings.TrimSpace(p.Failure), "\n")
	v.FailureMore = strings.Contains(strings.TrimSpace(p.Failure), "\n")
	if rec.Cut {
		last := rec.Events[n-1]
		v.Cut = fmt.Sprintf("The record hit its size limit (sim.Config.MaxRecord) and stops after event #%d at %s: the run's later events, and maybe the failure itself, are not in it.", last.Seq, at(last.At))
	}

	// The page opens on the violating read, if it is drawn.
	viol, ok := violatingRead(rec)
	if !ok || lanes[laneOf(rec.Events[viol.read])] == nil {
		viol.read = -1
	}
	v.Violating = viol.read
	c := &v.Chart
	bottom := axisH
	for _, g := range groups {
		if g.name != "" {
			c.Groups = append(c.Groups, groupView{Name: g.name, Style: cssBox("0", strconv.Itoa(g.top), "", strconv.Itoa(groupH))})
		}
		for _, l := range g.lanes {
			c.Lanes = append(c.Lanes, viewLane(d, ax, l, v.Violating))
			bottom = l.top + l.height
		}
	}
	// A little room past the end for the labels of what happens last.
	c.Width = labelW + int(ax.width) + 60
	c.Height = bottom + 8
	c.Style = template.CSS(fmt.Sprintf("width:%dpx;height:%dpx", c.Width, c.Height))
	c.TimeTicks = tickViews(ax.timeTicks(), c.Height)
	c.OrdTicks = tickViews(ax.ordinalTicks(), c.Height)
	c.Arrows = arrowViews(d, ax, lanes, drawn)
	// The run failed where its record ends, unless the record was cut.
	c.Bands = bandViews(d, ax, drawn, c.Height, p.Failure != "" && hi == n && !rec.Cut)
	if viol.read >= 0 {
		c.Window, v.WindowLine = windowViews(d, ax, lanes, viol, p.Window, c.Height)
	}

	shown := shownEvents(d, drawn, lo, hi)
	data, note := detailsData(rec, shown, p.Trace)
	v.Data, v.TraceNote = data, note
	v.Blamed, v.BlamedMore = blamedRows(rec, shown)
	v.Stats = stats(d, len(c.Lanes), len(drawn), len(c.Arrows))
	return v
}

// dropRunOnly leaves out the preemption markers of tasks that do nothing
// else on the page: a task that only ran gets no lane.
func dropRunOnly(d *drawing, drawn []int) []int {
	busy := map[laneKey]bool{} // lookups only
	for _, i := range drawn {
		if s := &d.shapes[i]; s.kind != kPreempt {
			busy[s.lane] = true
		}
	}
	kept := drawn[:0:0]
	for _, i := range drawn {
		if s := &d.shapes[i]; s.kind != kPreempt || busy[s.lane] {
			kept = append(kept, i)
		}
	}
	return kept
}

func stats(d *drawing, lanes, shapes, arrows int) string {
	evs := d.rec.Events
	first, last := evs[0], evs[len(evs)-1]
	return fmt.Sprintf("%s of %s over %s of virtual time (%s to %s, steps %d to %d); drawn: %s, %s, %s.",
		plural(len(evs), "event"), plural(len(d.rec.Tasks), "task"), dur(last.At-first.At), at(first.At), at(last.At), first.Step, last.Step,
		plural(lanes, "lane"), plural(shapes, "bar or marker"), plural(arrows, "message arrow"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if w, ok := strings.CutSuffix(what, " or marker"); ok {
		return fmt.Sprintf("%d %ss and markers", n, w)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// viewLane lays out a lane's shapes; the one holding event violating (the
// violating read's answer) is marked for the script to open on.
func viewLane(d *drawing, ax *axes, l *lane, violating int) laneView {
	lv := laneView{Name: l.name, Label: clip(l.label, 40), Group: l.group, Task: l.key.task,
		Style: cssBox("0", strconv.Itoa(l.top), "", strconv.Itoa(l.height))}
	switch {
	case l.key.task == -1:
		lv.Title = "the world (task -1): timers firing, messages delivered, statements"
	case l.key.task == -2:
		lv.Title = "subscriber " + l.name + ": what the world delivered to it"
	default:
		lv.Title = fmt.Sprintf("task %d: %s", l.key.task, l.name)
	}
	for _, i := range l.shapes {
		s := &d.shapes[i]
		t, o := ax.span(s)
		cur := t
		if ax.chosen == axisOrdinal {
			cur = o
		}
		left, width, _ := strings.Cut(cur, " ")
		sv := shapeView{Class: kindClass[s.kind], T: t, O: o, Ev: seqs(s.evs), Blamed: d.blame(s), Title: d.title(s),
			Style: cssBox(left, strconv.Itoa(l.shapeTop(s)), width, "")}
		if s.kind.point() {
			sv.Span = s.visible()
		} else {
			sv.Label = clip(s.label, maxLabel)
		}
		if sv.Blamed != "" {
			sv.Class += " blamed"
		}
		sv.Violating = violating >= 0 && slices.Contains(s.evs, violating)
		if s.open {
			sv.Class += " open"
		}
		if s.s0 < ax.lo {
			sv.Class += " clipped"
		}
		if s.mark != "" {
			sv.Class += " marked"
		}
		lv.Shapes = append(lv.Shapes, sv)
	}
	return lv
}

func tickViews(ts []tick, height int) []tickView {
	var vs []tickView
	for _, t := range ts {
		vs = append(vs, tickView{Label: t.label, X: num(t.x), Style: cssBox(num(t.x), "0", "", strconv.Itoa(height))})
	}
	return vs
}

func arrowViews(d *drawing, ax *axes, lanes map[laneKey]*lane, drawn []int) []arrowView {
	in := make([]bool, len(d.shapes))
	for _, i := range drawn {
		in[i] = true
	}
	var vs []arrowView
	for _, a := range d.arrows {
		if !in[a.from] || !in[a.to] {
			continue
		}
		f, t := &d.shapes[a.from], &d.shapes[a.to]
		tx1, tx2 := ax.tx(f.t0), ax.tx(t.t0)
		ox1, ox2 := ax.ox(f.s0), ax.ox(t.s0)
		av := arrowView{Class: "arr", Y1: lanes[f.lane].markY(), Y2: lanes[t.lane].markY(),
			T: num(tx1) + " " + num(tx2), O: num(ox1) + " " + num(ox2), Ev: seqs([]int{f.s0, t.s0})}
		av.X1, av.X2 = num(tx1), num(tx2)
		if ax.chosen == axisOrdinal {
			av.X1, av.X2 = num(ox1), num(ox2)
		}
		e := d.rec.Events[t.s0]
		av.Title = fmt.Sprintf("message #%d to %s: %s", e.Ref, e.Object, describe(d.rec.Events[f.s0]))
		if a.lost {
			av.Class += " lost"
			av.Title += " (lost)"
		}
		if a.mark != "" {
			av.Class += " marked"
			av.Title += " (" + a.mark + ")"
		}
		if bl := d.blame(f) + d.blame(t); bl != "" {
			av.Class += " blamed"
			av.Blamed = bl
		}
		av.Title = clip(av.Title, maxLabel)
		vs = append(vs, av)
	}
	return vs
}

// bandViews draw each blamed operation's or statement's interval across
// all lanes, so that what ran during it (the commit that made a read
// stale) lines up under it; and a line where the run failed.
func bandViews(d *drawing, ax *axes, drawn []int, height int, failedAtEnd bool) []bandView {
	var vs []bandView
	top := strconv.Itoa(axisH)
	h := strconv.Itoa(height - axisH)
	cur := func(t, o string) (string, string) {
		if ax.chosen == axisOrdinal {
			t = o
		}
		l, w, _ := strings.Cut(t, " ")
		return l, w
	}
	for _, i := range drawn {
		s := &d.shapes[i]
		if s.kind.point() {
			continue
		}
		bl := d.blame(s)
		if bl == "" || len(vs) >= maxBands {
			continue
		}
		t, o := ax.span(s)
		l, w := cur(t, o)
		vs = append(vs, bandView{Class: "band" + late(ax, t, o), Label: "✗ " + clip(bl, 80), T: t, O: o, Ev: seqs(s.evs), Style: cssBox(l, top, w, h)})
	}
	for i := range vs {
		vs[i].LabelStyle = template.CSS("top:" + strconv.Itoa(2+13*(i%3)) + "px")
	}
	if failedAtEnd {
		last := d.rec.Events[len(d.rec.Events)-1]
		t, o := px(ax.tx(last.At), 2), px(ax.ox(last.Seq), 2)
		l, w := cur(t, o)
		vs = append(vs, bandView{Class: "band fail" + late(ax, t, o), Label: "✗ failed", T: t, O: o, Ev: strconv.Itoa(last.Seq), Style: cssBox(l, top, w, h)})
	}
	return vs
}

// late marks a band in the last third of the drawing, on each axis: its
// label goes to its left, so that it does not run off the chart.
func late(ax *axes, t, o string) string {
	c := ""
	edge := labelW + ax.width*2/3
	for i, v := range []string{t, o} {
		l, _, _ := strings.Cut(v, " ")
		if x, err := strconv.ParseFloat(l, 64); err == nil && x > edge {
			c += [...]string{" late-t", " late-o"}[i]
		}
	}
	return c
}

// shownEvents are the events the details panel knows: those in the
// window but the scheduler's plain switches, and every event of a shape
// drawn (an operation begun before the window).
func shownEvents(d *drawing, drawn []int, lo, hi int) []bool {
	shown := make([]bool, len(d.rec.Events))
	for q := lo; q < hi; q++ {
		e := d.rec.Events[q]
		shown[q] = slotted(e) || e.Kind == record.EventSpawn || e.Kind == record.EventDone
	}
	for _, i := range drawn {
		for _, q := range d.shapes[i].evs {
			shown[q] = true
		}
	}
	return shown
}

type jsEvent struct {
	Seq    int    `json:"seq"`
	Step   int64  `json:"step"`
	At     string `json:"at"`
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	Object string `json:"object,omitempty"`
	Text   string `json:"text,omitempty"`
	From   string `json:"from,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Blame  string `json:"blame,omitempty"`
}

type jsLine struct {
	Step int64  `json:"step"`
	Line string `json:"line"`
}

type jsData struct {
	Events []jsEvent `json:"events"`
	Trace  []jsLine  `json:"trace"`
	Traced bool      `json:"traced"` // a trace was given (else the panel says so, not "none")
}

// detailsData is the JSON the details panel reads. encoding/json escapes
// <, > and & (and U+2028, U+2029), so the text cannot end the script
// element it sits in: it is safe to write out as it is.
func detailsData(rec *record.Record, shown []bool, trace []string) (template.JS, string) {
	data := jsData{Events: []jsEvent{}, Trace: []jsLine{}, Traced: trace != nil}
	steps := map[int64]int{} // lookups only
	for q, ok := range shown {
		if !ok {
			continue
		}
		e := rec.Events[q]
		je := jsEvent{Seq: e.Seq, Step: e.Step, At: at(e.At), Task: taskName(rec, e.Task), Kind: e.Kind.String(),
			Object: e.Object, Text: clip(e.Text, maxText), Blame: clip(e.Blame, maxText)}
		switch e.Kind {
		case record.EventOpEnd, record.EventInterval:
			je.From = at(e.From)
		}
		switch e.Kind {
		case record.EventOpBegin, record.EventOpEnd:
			je.Ref = fmt.Sprintf("operation %d", e.Ref)
		case record.EventSend, record.EventReceive, record.EventLost:
			je.Ref = fmt.Sprintf("message %d", e.Ref)
		case record.EventSwitch:
			if e.Ref >= 0 {
				je.Ref = "preempted " + taskName(rec, int32(e.Ref))
			}
		}
		data.Events = append(data.Events, je)
		steps[e.Step] = 0
	}
	note := "No trace lines were given for this page."
	if trace != nil {
		kept, dropped := 0, 0
		for _, line := range trace {
			step, ok := stepOf(line)
			if !ok {
				continue
			}
			c, want := steps[step]
			if !want {
				continue
			}
			if c >= maxTraceStep || kept >= maxTrace {
				dropped++
				continue
			}
			steps[step] = c + 1
			data.Trace = append(data.Trace, jsLine{Step: step, Line: clip(line, maxText)})
			kept++
		}
		note = fmt.Sprintf("%d trace lines of the steps drawn are on this page", kept)
		if dropped > 0 {
			note += fmt.Sprintf(" (%d more left out: at most %d a step, %d in all)", dropped, maxTraceStep, maxTrace)
		}
		note += "."
	}
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // strings and numbers only: cannot happen
	}
	return template.JS(b), note
}

// stepOf reads the step of a trace line ("step 12   +1.5ms run ...").
func stepOf(line string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "step ")
	if !ok {
		return 0, false
	}
	rest = strings.TrimLeft(rest, " ")
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.ParseInt(rest[:end], 10, 64)
	return n, err == nil
}

func blamedRows(rec *record.Record, shown []bool) ([]blamedRow, int) {
	var rows []blamedRow
	more := 0
	for _, e := range rec.Events {
		if e.Blame == "" {
			continue
		}
		if len(rows) >= maxBlamedRows {
			more++
			continue
		}
		r := blamedRow{Seq: "#" + strconv.Itoa(e.Seq), At: at(e.At), Step: strconv.FormatInt(e.Step, 10),
			Task: taskName(rec, e.Task), Event: clip(describe(e), maxLabel), Blame: clip(e.Blame, maxText), Drawn: shown[e.Seq]}
		if r.Drawn {
			r.Ev = strconv.Itoa(e.Seq)
		}
		rows = append(rows, r)
	}
	return rows, more
}

package timeline

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/windtunnel/windtunnel/sim/record"
)

// What the template draws. Everything is laid out here, in Go; the
// template only writes it out, escaping every text.

type pageView struct {
	Title                     string
	Failure, FailureFirst     string
	FailureMore               bool
	Commands                  []string
	Links                     []Link
	Stats                     string
	Cut                       string
	LeftOut                   string
	Axis                      string // the axis the page opens with
	AxisReason                string
	Blamed                    []blamedRow
	BlamedMore                int
	Chart                     chartView
	Data                      template.JS // the details panel's events and trace lines, as JSON
	Style                     template.CSS
	Script                    template.JS
	TraceNote                 string
	TimeAxisName, OrdAxisName string
	TimeAxisDesc, OrdAxisDesc string
	DrawnEvents               int
	// Caption says why the axis shown is drawn as it is; the script swaps
	// in the other axis' caption when the axis is switched.
	Caption, CaptionTime, CaptionOrd string
	Violating                        int    // the violating read's answer, by Seq; -1 for none
	WindowLine                       string // the claim's window in words ("" for none)
}

type blamedRow struct {
	Ev, Seq, At, Step, Task, Event, Blame string
	Drawn                                 bool
}

type chartView struct {
	Style     template.CSS
	Width     int
	Height    int
	TimeTicks []tickView
	OrdTicks  []tickView
	Groups    []groupView
	Lanes     []laneView
	Arrows    []arrowView
	Bands     []bandView
	Window    *windowView
}

type tickView struct {
	Style template.CSS
	X     string // its left, which the script scales when it zooms
	Label string
}

type groupView struct {
	Name  string
	Style template.CSS
}

type laneView struct {
	Name, Label, Title, Group string
	Task                      int32
	Style                     template.CSS
	Shapes                    []shapeView
}

type shapeView struct {
	Class  string
	Style  template.CSS
	T, O   string // "left width" on the time and event-order axes
	Ev     string // the events it stands for, by Seq, for the details panel
	Blamed string
	Title  string
	Label  string // a bar's text
	Span   string // a marker's visible label
	// Violating marks the violating read's operation, where the page opens.
	Violating bool
}

type arrowView struct {
	Class          string
	Y1, Y2         int
	X1, X2         string // on the axis the page opens with
	T, O           string // "x1 x2" on both axes
	Ev, Title, Lbl string
	Blamed         string
}

type bandView struct {
	Class, Label string
	Style        template.CSS
	LabelStyle   template.CSS // its label's offset: bands' labels are staggered, not drawn over each other
	T, O         string
	Ev           string
}

// Bounds on what the page lists besides the chart.
const (
	maxBlamedRows = 50
	maxBands      = 20
	maxLabel      = 160   // a bar's or tooltip's text, in runes
	maxText       = 2000  // an event's text in the details panel
	maxTraceStep  = 24    // trace lines shown for one step
	maxTrace      = 20000 // trace lines on the page
)

// clip cuts s to n runes, with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// describe is an event in a line, for tooltips and the blamed table: the
// record's own words, with where an interval began and a switch without a
// task named as such.
func describe(e record.Event) string {
	switch {
	case e.Kind == record.EventSwitch && e.Ref < 0:
		return "switch"
	case e.Kind == record.EventInterval:
		return fmt.Sprintf("%s: %s [%s from %s]", e.Object, e.Text, dur(e.At-e.From), at(e.From))
	}
	return e.String()
}

// visible is a marker's label on the chart: only what a person scans for.
func (s *shape) visible() string {
	switch {
	case s.kind == kLost && s.mark != "":
		return "× lost (" + s.mark + ")"
	case s.kind == kLost:
		return "× lost"
	case s.kind == kFault:
		return "⚡ " + clip(s.label, 40)
	case s.mark != "":
		return s.mark
	}
	return ""
}

// title is a shape's tooltip: what it is, when, and what was blamed.
func (d *drawing) title(s *shape) string {
	var b strings.Builder
	b.WriteString(clip(s.label, maxLabel))
	if s.kind.point() {
		e := d.rec.Events[s.s0]
		fmt.Fprintf(&b, "\n%s at %s, step %d, #%d", e.Kind, at(e.At), e.Step, e.Seq)
	} else {
		end := "to " + at(s.t1)
		if s.open {
			end = "and never ends in the record"
		}
		fmt.Fprintf(&b, "\n%s from %s %s (%s)", kindName[s.kind], at(s.t0), end, dur(s.t1-s.t0))
	}
	if s.mark != "" {
		b.WriteString("\nmessage " + s.mark)
	}
	if bl := d.blame(s); bl != "" {
		b.WriteString("\n✗ " + clip(bl, maxLabel))
	}
	return b.String()
}

var kindName = [...]string{kLock: "held", kRLock: "read-held", kWait: "waited", kOp: "operation", kInterval: "interval"}

func seqs(evs []int) string {
	var b strings.Builder
	for i, q := range evs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(q))
	}
	return b.String()
}

func cssBox(left, top, width, height string) template.CSS {
	// Only numbers go in, so the text is safe CSS.
	s := "left:" + left + "px;top:" + top + "px"
	if width != "" {
		s += ";width:" + width + "px"
	}
	if height != "" {
		s += ";height:" + height + "px"
	}
	return template.CSS(s)
}

package timeline

import (
	"fmt"
	"strconv"
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

// The two axes. A shape carries its place on both (data-t, data-o), so the
// page's toggle only swaps them.
const (
	axisTime    = "time"
	axisOrdinal = "ordinal"
)

const (
	pad       = 12     // room at both ends of the drawing
	slotPx    = 16     // an event's room on the event-order axis
	minWidth  = 740    // the drawing's narrowest: beside the details panel on a 1400px screen
	maxWidth  = 200000 // the widest: past it, event-order slots narrow
	tickPx    = 140    // about this far apart
	maxTicks  = 400    // per axis, to bound the page
	crowdPx   = 2.0    // events closer than this on the time axis sit on each other
	minBarPx  = 4.0    // a bar of no duration still shows
	markerW   = 10.0   // a marker's width
	noteW     = 3.0    // a note's tick
	crowdFrac = 0.5    // more than this share of events crowded: event order
)

// axes maps the window's events to x on both axes.
type axes struct {
	evs    []record.Event
	lo, hi int           // the window of events drawn
	t0, t1 time.Duration // the time axis' span
	slots  []int         // the events with a place on the event-order axis, by Seq
	width  float64       // the drawing's width, without the lane names
	slotW  float64
	// chosen is the axis the page opens with, and why.
	chosen, reason  string
	crowded, shared int
}

// slotted reports whether an event gets a place on the event-order axis:
// every event but the scheduler's bookkeeping nobody reads.
func slotted(e record.Event) bool {
	if e.Blame != "" {
		return true
	}
	switch e.Kind {
	case record.EventSpawn, record.EventDone:
		return false
	case record.EventSwitch:
		return e.Ref >= 0
	}
	return true
}

func newAxes(d *drawing, drawn []int, lo, hi int) *axes {
	evs := d.rec.Events
	a := &axes{evs: evs, lo: lo, hi: hi, t0: evs[lo].At, t1: evs[hi-1].At}
	if lo == 0 {
		// Nothing was cut before: an interval that began before the first
		// event is drawn from its start.
		for _, i := range drawn {
			a.t0 = min(a.t0, d.shapes[i].t0)
		}
	}
	for q := lo; q < hi; q++ {
		if slotted(evs[q]) {
			a.slots = append(a.slots, q)
		}
	}
	if len(a.slots) == 0 {
		a.slots = []int{hi - 1}
	}
	n := len(a.slots)
	a.width = float64(min(max(n*slotPx, minWidth), maxWidth))
	a.slotW = (a.width - 2*pad) / float64(n)
	a.choose()
	return a
}

// choose picks the axis the page opens with: virtual time, unless most
// events would sit on top of each other there (a cache hit takes no
// virtual time), and then event order.
func (a *axes) choose() {
	n := len(a.slots)
	for i := 1; i < n; i++ {
		p, q := a.evs[a.slots[i-1]], a.evs[a.slots[i]]
		if p.At == q.At {
			a.shared++
		}
		if a.tx(q.At)-a.tx(p.At) < crowdPx {
			a.crowded++
		}
	}
	span := a.t1 - a.t0
	switch {
	case span <= 0:
		a.chosen = axisOrdinal
		a.reason = fmt.Sprintf("all %d events happen at one virtual instant (%s)", n, at(a.t0))
	case float64(a.crowded) > crowdFrac*float64(n):
		a.chosen = axisOrdinal
		a.reason = fmt.Sprintf("on a time axis %d of %d events would sit within %gpx of the one before (%d share a virtual instant with it: a cache hit takes no virtual time)", a.crowded, n, crowdPx, a.shared)
	default:
		a.chosen = axisTime
		a.reason = fmt.Sprintf("the %d events spread over %s of virtual time (%d share an instant with the one before)", n, dur(span), a.shared)
	}
}

// captions say, for each axis, what x is there and how the events lie on
// it; the chosen axis' caption says it was chosen and why, the other's
// that it was switched to, so that the caption under the toggle is true
// for the axis shown.
func (a *axes) captions() (timeCap, ordCap string) {
	n := len(a.slots)
	span := a.t1 - a.t0
	var onTime string
	switch {
	case span <= 0:
		onTime = fmt.Sprintf("all %d events sit at one virtual instant (%s), on top of each other", n, at(a.t0))
	default:
		onTime = fmt.Sprintf("the %d events spread over %s of virtual time, %s to %s; %d of them sit within %gpx of the one before (%d share a virtual instant with it: a cache hit takes no virtual time)",
			n, dur(span), at(a.t0), at(a.t1), a.crowded, crowdPx, a.shared)
	}
	first, last := a.slots[0], a.slots[n-1]
	onOrd := fmt.Sprintf("each of the %d events has a slot of its own in the order they happened, #%d (%s) to #%d (%s), whatever virtual time passed between them",
		n, first, at(a.evs[first].At), last, at(a.evs[last].At))
	if a.chosen == axisTime {
		return "Virtual time, chosen automatically because " + a.reason + ".",
			"Event order (switched from virtual time, which the page chose): " + onOrd + "."
	}
	return "Virtual time (switched from event order, which the page chose): " + onTime + ".",
		"Event order, chosen automatically because " + a.reason + "."
}

// tx is where virtual time t is on the time axis, in the chart.
func (a *axes) tx(t time.Duration) float64 {
	span := a.t1 - a.t0
	if span <= 0 {
		return labelW + pad
	}
	f := float64(t-a.t0) / float64(span)
	f = min(max(f, 0), 1)
	return labelW + pad + f*(a.width-2*pad)
}

// ox is where event q is on the event-order axis, in the chart: the
// middle of its slot, or of the next slotted event's if it has none.
func (a *axes) ox(q int) float64 {
	if q < a.lo {
		return labelW
	}
	lo, hi := 0, len(a.slots)
	for lo < hi {
		m := (lo + hi) / 2
		if a.slots[m] >= q {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(a.slots) {
		return labelW + a.width
	}
	return a.slotX(lo)
}

func (a *axes) slotX(i int) float64 { return labelW + pad + (float64(i)+0.5)*a.slotW }

// span is a bar's or marker's "left width" on both axes.
func (a *axes) span(s *shape) (t, o string) {
	if s.kind.point() {
		w := markerW
		if s.kind == kNote {
			w = noteW
		}
		return px(a.tx(s.t0)-w/2, w), px(a.ox(s.s0)-w/2, w)
	}
	t0, t1 := a.tx(s.t0), a.tx(s.t1)
	o0, o1 := a.ox(s.s0), a.ox(s.s1)
	if s.s0 < a.lo {
		t0 = labelW
	}
	if s.s1 >= a.hi {
		t1, o1 = labelW+a.width, labelW+a.width
	}
	return px(t0, max(t1-t0, minBarPx)), px(o0, max(o1-o0, minBarPx))
}

// px formats a left and a width.
func px(x, w float64) string { return num(x) + " " + num(w) }

func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// tick is one label of an axis.
type tick struct {
	x     float64
	label string
}

// timeTicks are round instants about tickPx apart.
func (a *axes) timeTicks() []tick {
	span := a.t1 - a.t0
	if span <= 0 {
		return []tick{{a.tx(a.t0), at(a.t0)}}
	}
	n := min(max(int(a.width/tickPx), 2), maxTicks)
	step := niceDuration(span / time.Duration(n))
	var ts []tick
	first := (a.t0 + step - 1) / step * step
	for t := first; t <= a.t1 && len(ts) <= maxTicks; t += step {
		ts = append(ts, tick{a.tx(t), tickLabel(t, step)})
	}
	return ts
}

// ordinalTicks label every k-th slotted event with its number and time.
func (a *axes) ordinalTicks() []tick {
	n := len(a.slots)
	k := int(niceDuration(time.Duration(max(int(tickPx/a.slotW), 1, (n+maxTicks-1)/maxTicks))))
	var ts []tick
	for i := 0; i < n; i += k {
		q := a.slots[i]
		ts = append(ts, tick{a.slotX(i), fmt.Sprintf("#%d %s", q, at(a.evs[q].At))})
	}
	return ts
}

// niceDuration is the least of 1, 2, 5 times a power of ten at or above d.
func niceDuration(d time.Duration) time.Duration {
	if d < 1 {
		return 1
	}
	for p := time.Duration(1); ; p *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*p >= d {
				return m * p
			}
		}
	}
}

// tickLabel writes t in the largest unit the step is a whole number of.
func tickLabel(t, step time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {1, "ns"}}
	for _, u := range units {
		if step >= u.d {
			return fmt.Sprintf("+%d%s", t/u.d, u.name)
		}
	}
	return at(t)
}

// at writes a virtual instant as time since sim.Epoch.
func at(t time.Duration) string { return "+" + dur(t) }

func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

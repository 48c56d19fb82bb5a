package timeline

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

// Window is a claim's bound on how stale an answer may be: the value a
// read returns may have stopped being current less than Bound (at most
// Bound, for a bound that is not strict) before the read answered. It
// comes from the claims table, never from the code under test, so the page
// shows what the claim promised rather than what the code does.
type Window struct {
	Name  string        // the claim and its bound, as the table says it: "OC-2 open set max age < 1s"
	Bound time.Duration // the bound
}

// violation is the read a page opens on: the blamed answer, and the
// blamed event before it that made its value stale (a commit), if any.
type violation struct {
	read    int           // the answer's Seq
	since   int           // the event its value stopped being current at, -1 for none blamed
	sinceAt time.Duration // when (the read's invocation when none was blamed)
}

// violatingRead finds the violating read: of the blamed answers, the one
// stale the longest (from the latest blamed event before it that is not an
// operation's begin or answer: the commit that made it stale), else the
// first. ok is false for a record with no blamed answer.
func violatingRead(rec *record.Record) (v violation, ok bool) {
	best := time.Duration(-1)
	lastCause := -1
	for _, e := range rec.Events {
		if e.Blame == "" {
			continue
		}
		if e.Kind != record.EventOpEnd {
			if e.Kind != record.EventOpBegin {
				lastCause = e.Seq
			}
			continue
		}
		c := violation{read: e.Seq, since: lastCause, sinceAt: e.From}
		if lastCause >= 0 {
			c.sinceAt = rec.Events[lastCause].At
		}
		stale := e.At - c.sinceAt
		if lastCause < 0 {
			stale = -1 // a read with a cause blamed is the better witness
		}
		if !ok || stale > best {
			v, best, ok = c, stale, true
		}
	}
	return v, ok
}

type windowView struct {
	T, O       string // the band, "left width" on both axes
	Style      template.CSS
	Label      string
	ST, SO     string // the read's stale interval, "left width" on both axes
	StaleStyle template.CSS
	StaleTitle string
}

// windowViews draws the claim's window, from the moment the read's value
// stopped being current to the bound, as a band across the lanes. It draws
// the read's stale interval, from that moment to its answer, as a strip on
// the read's lane, so that where the strip runs past the band shows.
func windowViews(d *drawing, ax *axes, lanes map[laneKey]*lane, v violation, w *Window, height int) (*windowView, string) {
	evs := d.rec.Events
	read := evs[v.read]
	l := lanes[laneOf(read)]
	if w == nil || w.Bound <= 0 || l == nil {
		return nil, ""
	}
	end := v.sinceAt + w.Bound
	sinceQ := v.since
	if sinceQ < 0 {
		sinceQ = firstAtOrAfter(evs, v.sinceAt, read.Seq)
	}
	// On the event-order axis the window ends just before the first event
	// at or after its end.
	o0 := ax.ox(sinceQ)
	o1 := labelW + ax.width
	if q := firstAtOrAfter(evs, end, len(evs)); q < len(evs) {
		o1 = ax.ox(q) - ax.slotW/2
	}
	t0, t1 := ax.tx(v.sinceAt), ax.tx(end)
	wv := &windowView{T: px(t0, max(t1-t0, 2)), O: px(o0, max(o1-o0, 2)),
		ST: px(t0, max(ax.tx(read.At)-t0, 2)), SO: px(o0, max(ax.ox(read.Seq)-o0, 2))}
	cur, scur := wv.T, wv.ST
	if ax.chosen == axisOrdinal {
		cur, scur = wv.O, wv.SO
	}
	left, width, _ := strings.Cut(cur, " ")
	wv.Style = cssBox(left, strconv.Itoa(axisH), width, strconv.Itoa(height-axisH))
	left, width, _ = strings.Cut(scur, " ")
	wv.StaleStyle = cssBox(left, strconv.Itoa(l.top+1), width, "5")

	from := "the read's start"
	if v.since >= 0 {
		from = fmt.Sprintf("#%d, %s", v.since, clip(describe(evs[v.since]), 60))
	}
	stale := read.At - v.sinceAt
	wv.Label = fmt.Sprintf("%s: window %s, %s to %s", w.Name, dur(w.Bound), at(v.sinceAt), at(end))
	past := fmt.Sprintf("%s past the bound", dur(stale-w.Bound))
	if stale < w.Bound {
		past = fmt.Sprintf("%s within the bound", dur(w.Bound-stale))
	}
	wv.StaleTitle = fmt.Sprintf("read #%d stale for %s (%s to %s): %s", read.Seq, dur(stale), at(v.sinceAt), at(read.At), past)
	line := fmt.Sprintf("Window of %s (the claims table's bound): the value read #%d returned stopped being current at %s (%s); an answer may be stale for %s, until %s. The read answered at %s, stale for %s: %s.",
		w.Name, read.Seq, at(v.sinceAt), from, dur(w.Bound), at(end), at(read.At), dur(stale), past)
	return wv, line
}

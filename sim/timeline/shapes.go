package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

// kind is what a shape draws.
type kind uint8

const (
	kLock     kind = iota // a write hold, Lock to Unlock
	kRLock                // a read hold, RLock to RUnlock
	kWait                 // blocked, from the wait to the task's next event
	kOp                   // a client operation, OpBegin to OpEnd
	kInterval             // a world interval (a database statement), From to At
	kNote                 // a Tracef line
	kFault                // an injected fault
	kSend                 // a message published
	kReceive              // a subscriber got it
	kLost                 // a subscriber never will
	kPreempt              // the scheduler preempted another task for this one
	kOther                // a blamed event of a kind not drawn otherwise (a plain switch, spawn, end)
)

var kindClass = [...]string{
	kLock: "bar lock", kRLock: "bar rlock", kWait: "bar wait", kOp: "bar op", kInterval: "bar iv",
	kNote: "mk note", kFault: "mk fault", kSend: "mk send", kReceive: "mk recv", kLost: "mk lost",
	kPreempt: "mk pre", kOther: "mk other",
}

// point reports whether the kind is drawn as a marker rather than a bar.
func (k kind) point() bool { return k >= kNote }

// section is the part of a lane a shape sits in: markers on top, then the
// operations a client sees, then the locks behind them, then the
// statements the world ran. Each section stacks overlapping bars in tracks.
type section uint8

const (
	secMarks section = iota
	secOps
	secLocks
	secIntervals
	nSections
)

func (k kind) section() section {
	switch k {
	case kOp:
		return secOps
	case kLock, kRLock, kWait:
		return secLocks
	case kInterval:
		return secIntervals
	}
	return secMarks
}

// laneKey names a lane: a task (task >= 0), the world (task -1), or a
// subscriber the world delivered to (task -2, sub its name).
type laneKey struct {
	task int32
	sub  string
}

var worldLane = laneKey{task: -1}

// shape is one drawn thing: a bar spanning events s0..s1 of the record, or
// a marker at one event (s0 == s1).
type shape struct {
	kind   kind
	lane   laneKey
	s0, s1 int           // the first and last event it spans, by Seq
	t0, t1 time.Duration // the same in virtual time
	evs    []int         // the events it stands for, by Seq
	label  string
	open   bool   // it never ended in the record: an acquire never released, an operation never answered
	mark   string // a message's treatment worth seeing: duplicate, reorder, delayed
	track  int    // its track within its lane's section (layout)
}

// arrow is a message from its send to one subscriber's receive or loss.
type arrow struct {
	from, to int // shape indices: the send and the receive (or loss)
	lost     bool
	mark     string
}

// drawing is a record turned into shapes.
type drawing struct {
	rec    *record.Record
	shapes []shape
	arrows []arrow
}

// laneOf is the lane an event is drawn on. The world delivers messages
// (Task -1), so a receive or loss on the world goes to its subscriber's
// lane, where the arrow can point at something.
func laneOf(e record.Event) laneKey {
	if e.Task >= 0 {
		return laneKey{task: e.Task}
	}
	if (e.Kind == record.EventReceive || e.Kind == record.EventLost) && e.Object != "" {
		return laneKey{task: -2, sub: e.Object}
	}
	return worldLane
}

// markOf finds what a message's text says was done to it. The bus's texts
// say "duplicate", "reorder(ed)", "delayed" or "holds ... back".
func markOf(texts ...string) string {
	for _, t := range texts {
		l := strings.ToLower(t)
		switch {
		case strings.Contains(l, "duplicate"):
			return "duplicate"
		case strings.Contains(l, "reorder"):
			return "reorder"
		case strings.Contains(l, "delayed"):
			return "delayed"
		}
		if i := strings.Index(l, "holds "); i >= 0 && strings.Contains(l[i:], " back") {
			return "delayed"
		}
	}
	return ""
}

// holdKey finds the open hold an unlock releases.
type holdKey struct {
	object string
	read   bool
}

// draw pairs the record's events into shapes: acquires with releases,
// operations with answers, waits with the task's next event, sends with
// receives. Only lookups use maps; shapes come out in the record's order.
func draw(rec *record.Record) *drawing {
	d := &drawing{rec: rec}
	evs := rec.Events
	end := len(evs) - 1
	endAt := evs[end].At
	holds := map[holdKey][]int{} // open holds of an object, in acquire order
	ops := map[int64]int{}       // an operation's ref -> its shape
	waits := map[int32]int{}     // a task's open wait -> its shape
	sends := map[int64]int{}     // a message's number -> its send's shape
	add := func(s shape) int {
		d.shapes = append(d.shapes, s)
		return len(d.shapes) - 1
	}
	point := func(k kind, e record.Event, label string) int {
		return add(shape{kind: k, lane: laneOf(e), s0: e.Seq, s1: e.Seq, t0: e.At, t1: e.At, evs: []int{e.Seq}, label: label})
	}
	closeShape := func(i int, e record.Event) {
		s := &d.shapes[i]
		s.s1, s.t1, s.open = e.Seq, e.At, false
		s.evs = append(s.evs, e.Seq)
	}
	for _, e := range evs {
		// A blocked task does nothing else, so its wait ends at its next
		// event other than being switched to (the acquire, the wake-up's
		// work, or the end of a timed wait).
		if w, ok := waits[e.Task]; ok && e.Kind != record.EventSwitch {
			s := &d.shapes[w]
			s.s1, s.t1, s.open = e.Seq, e.At, false
			delete(waits, e.Task)
		}
		switch e.Kind {
		case record.EventSwitch:
			if e.Ref >= 0 {
				point(kPreempt, e, e.Text)
			} else if e.Blame != "" {
				point(kOther, e, "switch")
			}
		case record.EventSpawn, record.EventDone:
			if e.Blame != "" {
				point(kOther, e, e.Kind.String())
			}
		case record.EventNote:
			// The bus may say in a note what it does to a message.
			d.shapes[point(kNote, e, e.Text)].mark = markOf(e.Text)
		case record.EventFault:
			point(kFault, e, e.Text)
		case record.EventWait:
			if !strings.Contains(e.Text, "Lock") {
				// A sleep, or a worker idle until its next message, is
				// the lane's background, not part of the interleaving.
				continue
			}
			waits[e.Task] = add(shape{kind: kWait, lane: laneOf(e), s0: e.Seq, s1: end, t0: e.At, t1: endAt,
				evs: []int{e.Seq}, label: "waits: " + strings.TrimSpace(e.Text+" "+e.Object), open: true})
		case record.EventLock, record.EventRLock:
			k := holdKey{e.Object, e.Kind == record.EventRLock}
			sk := kLock
			if k.read {
				sk = kRLock
			}
			holds[k] = append(holds[k], add(shape{kind: sk, lane: laneOf(e), s0: e.Seq, s1: end, t0: e.At, t1: endAt,
				evs: []int{e.Seq}, label: e.Object, open: true}))
		case record.EventUnlock, record.EventRUnlock:
			k := holdKey{e.Object, e.Kind == record.EventRUnlock}
			open := holds[k]
			// The holder's own release first; a mutex may be released by
			// another task than took it, so else the latest open hold.
			j := len(open) - 1
			for i := len(open) - 1; i >= 0; i-- {
				if d.shapes[open[i]].lane.task == e.Task {
					j = i
					break
				}
			}
			if j < 0 { // released without a recorded acquire
				sk := kLock
				if k.read {
					sk = kRLock
				}
				add(shape{kind: sk, lane: laneOf(e), s0: e.Seq, s1: e.Seq, t0: e.At, t1: e.At, evs: []int{e.Seq}, label: e.Object + " (released, never acquired in the record)"})
				break
			}
			closeShape(open[j], e)
			holds[k] = append(open[:j:j], open[j+1:]...)
		case record.EventOpBegin:
			ops[e.Ref] = add(shape{kind: kOp, lane: laneOf(e), s0: e.Seq, s1: end, t0: e.At, t1: endAt,
				evs: []int{e.Seq}, label: e.Text, open: true})
		case record.EventOpEnd:
			if i, ok := ops[e.Ref]; ok {
				closeShape(i, e)
				d.shapes[i].label += " → " + e.Text
				delete(ops, e.Ref)
				break
			}
			add(shape{kind: kOp, lane: laneOf(e), s0: firstAtOrAfter(evs, e.From, e.Seq), s1: e.Seq, t0: e.From, t1: e.At,
				evs: []int{e.Seq}, label: "… → " + e.Text})
		case record.EventInterval:
			label := e.Text
			if e.Object != "" {
				label = e.Object + ": " + e.Text
			}
			add(shape{kind: kInterval, lane: laneOf(e), s0: firstAtOrAfter(evs, e.From, e.Seq), s1: e.Seq, t0: min(e.From, e.At), t1: e.At,
				evs: []int{e.Seq}, label: label})
		case record.EventSend:
			i := point(kSend, e, fmt.Sprintf("send #%d %s", e.Ref, e.Text))
			d.shapes[i].mark = markOf(e.Text)
			sends[e.Ref] = i
		case record.EventReceive, record.EventLost:
			k, verb := kReceive, "got"
			if e.Kind == record.EventLost {
				k, verb = kLost, "lost"
			}
			i := point(k, e, fmt.Sprintf("%s #%d %s", verb, e.Ref, e.Text))
			d.shapes[i].mark = markOf(e.Text)
			if from, ok := sends[e.Ref]; ok {
				mark := d.shapes[i].mark
				if mark == "" {
					mark = d.shapes[from].mark
				}
				d.arrows = append(d.arrows, arrow{from: from, to: i, lost: k == kLost, mark: mark})
			}
		}
	}
	for i := range d.shapes {
		if s := &d.shapes[i]; s.kind == kOp && s.open {
			s.label += " → (no answer)"
		}
	}
	return d
}

// firstAtOrAfter is the first event at or after virtual time t (events
// are in time order), no later than limit: where an interval that began at
// t starts on the event-order axis.
func firstAtOrAfter(evs []record.Event, t time.Duration, limit int) int {
	lo, hi := 0, limit
	for lo < hi {
		m := (lo + hi) / 2
		if evs[m].At >= t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// blame is what the checks said about a shape's events.
func (d *drawing) blame(s *shape) string {
	var b []string
	for _, q := range s.evs {
		if x := d.rec.Events[q].Blame; x != "" {
			b = append(b, x)
		}
	}
	return strings.Join(b, "; ")
}

package sim

import (
	"fmt"
	"strings"
	"time"
)

// A run's record (Config.Record) is every event a person needs to follow
// it: the context switches, the locks taken and released, the client
// operations from invocation to answer, the world's intervals (a database
// statement, with its snapshot instant in its text), the messages and their
// fates, the injected faults, and what a check blamed. The interleaving
// table and the timeline page are drawn from it. Recording costs a branch
// per event when off, so it is on only for the runs a person reads: a
// failing seed's re-run and its shrunk reproduction.
//
// Nothing recorded here enters the trace hash: a run hashes the same with
// the record on or off.

// EventKind says what an Event is.
type EventKind uint8

const (
	EventSwitch   EventKind = iota + 1 // the scheduler switched to Task (Ref: the task it preempted, which could have gone on; -1 for none)
	EventSpawn                         // Task started (Text: its name)
	EventDone                          // Task ended
	EventNote                          // a Tracef line
	EventWait                          // Task blocked on Object (Text: the operation, "Lock", "RLock", "Wait")
	EventLock                          // Task acquired Object for writing
	EventUnlock                        // Task released Object
	EventRLock                         // Task acquired Object for reading
	EventRUnlock                       // Task released its read hold of Object
	EventOpBegin                       // a client operation began (Ref: its id)
	EventOpEnd                         // it returned (Ref: its id; From: its invocation)
	EventInterval                      // the world's interval that ends now (From: its start), a database statement
	EventSend                          // a message was published (Ref: its number)
	EventReceive                       // a subscriber (Object) got it (Ref: its number)
	EventLost                          // a subscriber (Object) will never get it (Ref: its number)
	EventFault                         // a fault was injected
)

var eventKindNames = [...]string{
	EventSwitch: "switch", EventSpawn: "spawn", EventDone: "done", EventNote: "note", EventWait: "wait",
	EventLock: "lock", EventUnlock: "unlock", EventRLock: "rlock", EventRUnlock: "runlock",
	EventOpBegin: "op", EventOpEnd: "answer", EventInterval: "interval", EventSend: "send",
	EventReceive: "receive", EventLost: "lost", EventFault: "fault",
}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one entry of a run's record.
type Event struct {
	Seq    int           // its index in Record.Events
	Step   int64         // the scheduling step it happened in
	At     time.Duration // virtual time since Epoch
	Task   int32         // the task it happened on; -1 for the world (a timer firing, a message delivered)
	Kind   EventKind
	Object string        // the lock, the subscriber, the connection
	Text   string        // what happened, for a person
	From   time.Duration // EventInterval: when it began; EventOpEnd: the invocation
	Ref    int64         // EventOpBegin/OpEnd: the operation; EventSend/Receive/Lost: the message
	Blame  string        // what a check said about it (Sim.Blame)
}

// String is the event in words, one line, as the interleaving table and
// the timeline page show it (the page adds where an interval began).
func (e Event) String() string {
	switch e.Kind {
	case EventSwitch:
		return "▶ " + e.Text
	case EventWait:
		return "waits: " + e.Text + " " + e.Object
	case EventLock, EventUnlock, EventRLock, EventRUnlock:
		return e.Kind.String() + " " + e.Object
	case EventOpBegin:
		return "→ " + e.Text
	case EventOpEnd:
		return "← " + e.Text
	case EventInterval:
		return fmt.Sprintf("%s: %s [%s]", e.Object, e.Text, e.At-e.From)
	case EventSend:
		return fmt.Sprintf("send #%d %s", e.Ref, e.Text)
	case EventReceive:
		return fmt.Sprintf("%s got #%d %s", e.Object, e.Ref, e.Text)
	case EventLost:
		return fmt.Sprintf("#%d LOST for %s %s", e.Ref, e.Object, e.Text)
	case EventFault:
		return "FAULT " + e.Text
	case EventNote:
		return e.Text
	}
	return strings.TrimSpace(e.Kind.String() + " " + e.Text)
}

// Record is a run's full record.
type Record struct {
	Events []Event
	Tasks  []string // task names by id
	// Cut says the record hit Config.MaxRecord and later events are
	// missing.
	Cut bool
}

// EventID names a recorded event, for Blame. NoEvent is what the recording
// calls return when the record is off.
type EventID int

// NoEvent is the EventID of an event that was not recorded.
const NoEvent EventID = -1

// DefaultMaxRecord bounds a record (Config.MaxRecord).
const DefaultMaxRecord = 1 << 20

type recorder struct {
	events []Event
	max    int
	cut    bool
	nextOp int64
}

// Recording reports whether the run keeps a record: callers skip building
// texts for it otherwise.
func (s *Sim) Recording() bool { return s.rec != nil }

func (s *Sim) taskID() int32 {
	if s.current != nil {
		return s.current.id
	}
	return -1
}

// record adds e, on the current task (the world's, -1, outside one).
func (s *Sim) record(e Event) EventID { return s.recordOn(s.taskID(), e) }

func (s *Sim) recordOn(task int32, e Event) EventID {
	r := s.rec
	if len(r.events) >= r.max {
		r.cut = true
		return NoEvent
	}
	e.Seq, e.Step, e.At, e.Task = len(r.events), s.steps, time.Duration(s.nowNs), task
	r.events = append(r.events, e)
	return EventID(e.Seq)
}

// OpBegin records that a client operation begins and returns its id, for
// OpEnd. It counts the operation (Result.Operations) whether or not the run
// keeps a record.
func (s *Sim) OpBegin(format string, a ...any) EventID {
	s.operations++
	if s.rec == nil {
		return NoEvent
	}
	s.rec.nextOp++
	return s.record(Event{Kind: EventOpBegin, Ref: s.rec.nextOp, Text: fmt.Sprintf(format, a...)})
}

// OpEnd records the answer of the operation begun as id.
func (s *Sim) OpEnd(id EventID, format string, a ...any) EventID {
	if s.rec == nil || id == NoEvent {
		return NoEvent
	}
	b := s.rec.events[id]
	return s.record(Event{Kind: EventOpEnd, Ref: b.Ref, From: b.At, Text: fmt.Sprintf(format, a...)})
}

// Interval records something of the world that began at from and ends now
// on object: a database statement on its connection, say, whose snapshot
// instant its text gives.
func (s *Sim) Interval(from time.Time, object, format string, a ...any) EventID {
	if s.rec == nil {
		return NoEvent
	}
	return s.record(Event{Kind: EventInterval, Object: object, From: from.Sub(Epoch), Text: fmt.Sprintf(format, a...)})
}

// Message records a message's fate: EventSend when it is published,
// EventReceive when subscriber gets it, EventLost when subscriber never
// will. msg is the message's number, which ties the three together.
func (s *Sim) Message(kind EventKind, msg int64, subscriber, format string, a ...any) EventID {
	if s.rec == nil {
		return NoEvent
	}
	if kind != EventSend && kind != EventReceive && kind != EventLost {
		panic(fmt.Sprintf("sim: Message with kind %v (want EventSend, EventReceive or EventLost)", kind))
	}
	return s.record(Event{Kind: kind, Ref: msg, Object: subscriber, Text: fmt.Sprintf(format, a...)})
}

// Injected records an injected fault. Ask Keep(KeepFault) first, so that a
// shrinker can drop it.
func (s *Sim) Injected(format string, a ...any) EventID {
	if s.rec == nil {
		return NoEvent
	}
	return s.record(Event{Kind: EventFault, Text: fmt.Sprintf(format, a...)})
}

// Blame attaches what a check found to a recorded event: "this read broke
// OC-2", "this commit made its answer stale". The interleaving table and
// the timeline mark the events blamed. It is a no-op for NoEvent, so a
// check may blame without asking whether the run records.
func (s *Sim) Blame(id EventID, format string, a ...any) {
	if s.rec == nil || id < 0 || int(id) >= len(s.rec.events) {
		return
	}
	e := &s.rec.events[id]
	why := fmt.Sprintf(format, a...)
	if e.Blame != "" {
		e.Blame += "; " + why
	} else {
		e.Blame = why
	}
}

// recordSwitch notes a step given to another task than the last one, and
// whether that task could have gone on (a preemption).
func (s *Sim) recordSwitch(t *task, preempted *task) {
	e := Event{Kind: EventSwitch, Ref: -1}
	if preempted != nil {
		e.Text, e.Ref = "preempts "+preempted.name, int64(preempted.id)
	}
	s.recordOn(t.id, e)
}

func (s *Sim) recordObj(kind EventKind, object, text string) {
	s.record(Event{Kind: kind, Object: object, Text: text})
}

// recordOut is the run's record for its Result.
func (s *Sim) recordOut() *Record {
	if s.rec == nil {
		return nil
	}
	r := &Record{Events: s.rec.events, Cut: s.rec.cut, Tasks: make([]string, len(s.tasks))}
	for i, t := range s.tasks {
		r.Tasks[i] = t.name
	}
	return r
}

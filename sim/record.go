package sim

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

// A run's record (Config.Record) is every event a person needs to follow
// it. It holds the context switches, the locks taken and released, the client
// operations from invocation to answer, the world's intervals (a database
// statement, with its snapshot instant in its text), the messages and their
// fates, the injected faults, and what a check blamed. Its types are in
// sim/record. Recording costs a branch per event when off, so it is on only
// for the runs a person reads: a failing seed's re-run and its shrunk
// reproduction.
//
// Nothing recorded here enters the trace hash: a run hashes the same with
// the record on or off.

// defaultMaxRecord bounds a record (Config.MaxRecord).
const defaultMaxRecord = 1 << 20

type recorder struct {
	events []record.Event
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
func (s *Sim) record(e record.Event) record.EventID { return s.recordOn(s.taskID(), e) }

func (s *Sim) recordOn(task int32, e record.Event) record.EventID {
	r := s.rec
	if len(r.events) >= r.max {
		r.cut = true
		return record.NoEvent
	}
	e.Seq, e.Step, e.At, e.Task = len(r.events), s.steps, time.Duration(s.nowNs), task
	r.events = append(r.events, e)
	return record.EventID(e.Seq)
}

// OpBegin records that a client operation begins and returns its id, for
// OpEnd. It counts the operation (Result.Operations) whether or not the run
// keeps a record.
func (s *Sim) OpBegin(format string, a ...any) record.EventID {
	s.operations++
	if s.rec == nil {
		return record.NoEvent
	}
	s.rec.nextOp++
	return s.record(record.Event{Kind: record.EventOpBegin, Ref: s.rec.nextOp, Text: fmt.Sprintf(format, a...)})
}

// OpEnd records the answer of the operation begun as id.
func (s *Sim) OpEnd(id record.EventID, format string, a ...any) record.EventID {
	if s.rec == nil || id == record.NoEvent {
		return record.NoEvent
	}
	b := s.rec.events[id]
	return s.record(record.Event{Kind: record.EventOpEnd, Ref: b.Ref, From: b.At, Text: fmt.Sprintf(format, a...)})
}

// interval records something of the world that began at from and ends now
// on object: a database statement on its connection, say, whose snapshot
// instant its text gives (protocol.Interval, for sim/simdb).
func (s *Sim) interval(from time.Time, object, format string, a ...any) record.EventID {
	if s.rec == nil {
		return record.NoEvent
	}
	return s.record(record.Event{Kind: record.EventInterval, Object: object, From: from.Sub(Epoch), Text: fmt.Sprintf(format, a...)})
}

// message records a message's fate: EventSend when it is published,
// EventReceive when subscriber gets it, EventLost when subscriber never
// will (protocol.Message, for sim/simbus). msg is the message's number,
// which ties the three together.
func (s *Sim) message(kind record.EventKind, msg int64, subscriber, format string, a ...any) record.EventID {
	if s.rec == nil {
		return record.NoEvent
	}
	if kind != record.EventSend && kind != record.EventReceive && kind != record.EventLost {
		panic(fmt.Sprintf("sim: Message with kind %v (want EventSend, EventReceive or EventLost)", kind))
	}
	return s.record(record.Event{Kind: kind, Ref: msg, Object: subscriber, Text: fmt.Sprintf(format, a...)})
}

// Injected records an injected fault. Ask Keep(KeepFault) first, so that a
// shrinker can drop it.
func (s *Sim) Injected(format string, a ...any) record.EventID {
	if s.rec == nil {
		return record.NoEvent
	}
	return s.record(record.Event{Kind: record.EventFault, Text: fmt.Sprintf(format, a...)})
}

// Blame attaches what a check found to a recorded event: "this read broke
// OC-2", "this commit made its answer stale". The interleaving table and
// the timeline mark the events blamed. It is a no-op for record.NoEvent, so a
// check may blame without asking whether the run records.
func (s *Sim) Blame(id record.EventID, format string, a ...any) {
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
	e := record.Event{Kind: record.EventSwitch, Ref: -1}
	if preempted != nil {
		e.Text, e.Ref = "preempts "+preempted.name, int64(preempted.id)
	}
	s.recordOn(t.id, e)
}

func (s *Sim) recordObj(kind record.EventKind, object, text string) {
	s.record(record.Event{Kind: kind, Object: object, Text: text})
}

// recordOut is the run's record for its Result.
func (s *Sim) recordOut() *record.Record {
	if s.rec == nil {
		return nil
	}
	r := &record.Record{Events: s.rec.events, Cut: s.rec.cut, Tasks: make([]string, len(s.tasks))}
	for i, t := range s.tasks {
		r.Tasks[i] = t.name
	}
	return r
}

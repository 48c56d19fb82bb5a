// Package record holds a run's full record (sim.Config.Record): every
// event a person needs to follow the run, which the interleaving table and
// the timeline page draw and tests read. Workloads make events through
// sim.Sim (OpBegin, OpEnd, Blame, Injected) and need only EventID from here.
package record

import (
	"fmt"
	"strings"
	"time"
)

// EventKind says what an Event is.
type EventKind uint8

const (
	EventSwitch   EventKind = iota + 1 // the scheduler switched to Task (Ref: the task it preempted, which could have gone on; -1 for none)
	EventSpawn                         // Task started (Text: its name)
	EventDone                          // Task ended
	EventNote                          // a sim.Sim.Tracef line
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
	Blame  string        // what a check said about it (sim.Sim.Blame)
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

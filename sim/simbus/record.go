package simbus

import (
	"slices"
	"time"
)

// Cause is why a message did not reach a subscriber.
type Cause uint8

// The causes of a loss. CauseNone marks a message that was not lost.
const (
	CauseNone      Cause = iota
	CauseLoss            // dropped at random (Faults.LossProb)
	CausePartition       // sent, or in flight, during a partition window
	CauseReconnect       // sent, or in flight, during a reconnect gap
	CauseOverflow        // the subscriber's queue was full
	CauseClosed          // the subscriber or the bus closed before delivery
	numCauses
)

// lossCauses lists every cause of a loss, in a fixed order.
var lossCauses = [...]Cause{CauseLoss, CausePartition, CauseReconnect, CauseOverflow, CauseClosed}

// Causes returns every cause of a loss, in a fixed order.
func Causes() []Cause { return slices.Clone(lossCauses[:]) }

var causeNames = [numCauses]string{"none", "loss", "partition", "reconnect", "overflow", "closed"}

func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return "unknown"
}

// Fate is where a message stands for one subscriber.
type Fate uint8

// The fates of a message.
const (
	Pending   Fate = iota // in flight or queued: neither delivered nor lost yet
	Delivered             // the handler was called with it at least once
	Lost                  // it will never be delivered; Record.Cause says why
)

func (f Fate) String() string {
	switch f {
	case Pending:
		return "pending"
	case Delivered:
		return "delivered"
	case Lost:
		return "lost"
	}
	return "unknown"
}

// Record is what became of one published message for one subscriber.
// Scenarios read them after a run to know exactly which invalidations a pod
// never received (OC-2, MS-2) and when the others arrived.
type Record[M any] struct {
	Seq    uint64 // publish number on the bus, 1, 2, 3... in publish order
	From   string // the publisher, as given to Publish
	Msg    M
	SentAt time.Time
	Cause  Cause // why it was lost; CauseNone if not lost
	// Calls are the instants the handler was called with it: one, two when
	// duplicated, none if lost or pending.
	Calls []time.Time
	// Reordered is true when its first delivery came after the delivery of
	// a message published later.
	Reordered bool
}

// Fate returns whether the message was delivered, lost or is pending.
func (r Record[M]) Fate() Fate {
	switch {
	case len(r.Calls) > 0:
		return Delivered
	case r.Cause != CauseNone:
		return Lost
	}
	return Pending
}

func (r Record[M]) clone() Record[M] {
	r.Calls = slices.Clone(r.Calls)
	return r
}

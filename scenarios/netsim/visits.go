package netsim

import (
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

// OpKind is a scripted operation on a connection.
type OpKind uint8

const (
	// SetInactivity arms the inactivity timeout D (0 disarms).
	SetInactivity OpKind = iota + 1
	// SetActive arms the active timeout D (0 disarms).
	SetActive
	// Activity is network activity: the inactivity deadline moves later.
	Activity
	// Close closes the connection.
	Close
)

func (k OpKind) String() string {
	switch k {
	case SetInactivity:
		return "set-inactivity"
	case SetActive:
		return "set-active"
	case Activity:
		return "activity"
	case Close:
		return "close"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// ConnOp is one scripted operation at virtual instant At (since sim.Epoch).
type ConnOp struct {
	At   time.Duration
	Kind OpKind
	D    time.Duration
}

// Prediction is what the TW-1 contract alone says a wheel cop does with one
// connection: the passes that visit it and the timeouts they fire.
type Prediction struct {
	Visits int
	Fired  []Timeout // ID left 0
}

// Predict works out, from the contract and not from the wheel's code, how a
// wheel cop with a ring of ring ticks treats one connection given its
// operations (in time order, none on a tick): passes run at every tick
// 0, tick, 2*tick... and none is cut short by the budget. The rules:
//
//   - a connection is held at the wheel deadline of its last re-arm (every
//     setter, and every visit that finds it not yet due, re-arms it at the
//     real deadline; activity does not);
//   - a wheel deadline at lies in the bucket of tick k = floor(at/tick)+1,
//     never behind the next pass's tick, and that bucket is examined at
//     ticks k, k-ring, k-2*ring... from the next pass on: so the next visit
//     is the first tick >= the next pass's that is congruent to k modulo
//     the ring (TW-5: once per ring until due);
//   - a visit fires every timeout whose deadline is strictly before the
//     pass instant (TW-2), disarming it, and re-arms the rest.
//
// It counts the passes up to and including instant until.
func Predict(ring int64, tick time.Duration, ops []ConnOp, until time.Duration) (Prediction, error) {
	var p Prediction
	var idle, inact, active time.Duration // 0: none
	scheduled := false
	var k int64      // the tick of the bucket that holds it
	var cursor int64 // the next pass's tick
	deadline := func() time.Duration {
		switch {
		case inact == 0:
			return active
		case active == 0 || inact < active:
			return inact
		}
		return active
	}
	rearm := func() {
		d := deadline()
		scheduled = d != 0
		if scheduled {
			k = max(int64(d/tick)+1, cursor)
		}
	}
	next := func() int64 { return cursor + ((k-cursor)%ring+ring)%ring }
	visit := func(v int64) {
		p.Visits++
		cursor = v + 1
		now := time.Duration(v) * tick
		d := deadline()
		if d == 0 || d >= now {
			rearm()
			return
		}
		if inact != 0 && inact < now {
			p.Fired = append(p.Fired, Timeout{Kind: inactivitycop.Inactivity, Deadline: inact, At: now})
			idle, inact = 0, 0
		}
		if active != 0 && active < now {
			p.Fired = append(p.Fired, Timeout{Kind: inactivitycop.Active, Deadline: active, At: now})
			active = 0
		}
		rearm()
	}
	if !slices.IsSortedFunc(ops, func(a, b ConnOp) int { return int(a.At - b.At) }) {
		return p, fmt.Errorf("netsim: Predict needs operations in time order")
	}
	for _, op := range ops {
		if op.At <= 0 || op.At%tick == 0 {
			return p, fmt.Errorf("netsim: Predict: operation %v at %v must be after 0 and off the tick grid", op.Kind, op.At)
		}
		if op.At > until {
			return p, fmt.Errorf("netsim: Predict: operation %v at %v is after %v", op.Kind, op.At, until)
		}
		for scheduled && time.Duration(next())*tick < op.At {
			visit(next())
		}
		cursor = max(cursor, int64(op.At/tick)+1)
		switch op.Kind {
		case SetInactivity:
			idle, inact = op.D, 0
			if op.D > 0 {
				inact = op.At + op.D
			}
			rearm()
		case SetActive:
			active = 0
			if op.D > 0 {
				active = op.At + op.D
			}
			rearm()
		case Activity:
			if idle > 0 && op.At+idle > inact {
				inact = op.At + idle
			}
		case Close:
			idle, inact, active, scheduled = 0, 0, 0, false
		}
	}
	for scheduled && time.Duration(next())*tick <= until { // bounded: each visit moves the cursor on
		visit(next())
	}
	return p, nil
}

package checks

import (
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/model"
)

// The oracle of the exact-count checks of the timer-wheel cop (TW-3, TW-5,
// TW-8): from the TW-1 contract alone, which passes visit a connection and
// which of its timeouts they fire.

// CopOpKind is an operation on a connection of a cop.
type CopOpKind uint8

const (
	// OpSetInactivity arms the inactivity timeout D (0 disarms).
	OpSetInactivity CopOpKind = iota + 1
	// OpSetActive arms the active timeout D (0 disarms).
	OpSetActive
	// OpActivity is network activity: the inactivity deadline moves later.
	OpActivity
	// OpClose closes the connection.
	OpClose
)

func (k CopOpKind) String() string {
	switch k {
	case OpSetInactivity:
		return "set-inactivity"
	case OpSetActive:
		return "set-active"
	case OpActivity:
		return "activity"
	case OpClose:
		return "close"
	}
	return fmt.Sprintf("CopOpKind(%d)", uint8(k))
}

// CopOp is one operation at virtual instant At (since sim.Epoch).
type CopOp struct {
	At   time.Duration
	Kind CopOpKind
	D    time.Duration
}

// CopPrediction is what the TW-1 contract alone says a wheel cop does with
// one connection: the passes that visit it and the timeouts they fire.
type CopPrediction struct {
	Visits int
	Fired  []TimeoutEvent // Conn left 0
}

// PredictCop works out, from the contract and not from the wheel's code, how
// a wheel cop with a ring of ring ticks treats one connection given its
// operations (in time order, none on a tick). Passes run at every tick 0,
// tick, 2*tick... and none is cut short by the budget. The rules:
//
//   - A connection is held at the wheel deadline of its last re-arm. Every
//     setter, and every visit that finds it not yet due, re-arms it at the
//     real deadline; activity does not.
//   - A wheel deadline at lies in the bucket of tick k = floor(at/tick)+1,
//     never behind the next pass's tick. That bucket is examined at ticks k,
//     k-ring, k-2*ring... from the next pass on. So the next visit is the
//     first tick >= the next pass's that is congruent to k modulo the ring
//     (TW-5: once per ring until due).
//   - A visit fires every timeout whose deadline is strictly before the
//     pass instant (TW-2), disarming it, and re-arms the rest.
//
// It counts the passes up to and including instant until.
func PredictCop(ring int64, tick time.Duration, ops []CopOp, until time.Duration) (CopPrediction, error) {
	var p CopPrediction
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
			p.Fired = append(p.Fired, TimeoutEvent{Kind: model.InactivityTimeout, Deadline: At(inact), At: At(now)})
			idle, inact = 0, 0
		}
		if active != 0 && active < now {
			p.Fired = append(p.Fired, TimeoutEvent{Kind: model.ActiveTimeout, Deadline: At(active), At: At(now)})
			active = 0
		}
		rearm()
	}
	if !slices.IsSortedFunc(ops, func(a, b CopOp) int { return int(a.At - b.At) }) {
		return p, fmt.Errorf("checks: PredictCop needs operations in time order")
	}
	for _, op := range ops {
		if op.At <= 0 || op.At%tick == 0 {
			return p, fmt.Errorf("checks: PredictCop: operation %v at %v must be after 0 and off the tick grid", op.Kind, op.At)
		}
		if op.At > until {
			return p, fmt.Errorf("checks: PredictCop: operation %v at %v is after %v", op.Kind, op.At, until)
		}
		for scheduled && time.Duration(next())*tick < op.At {
			visit(next())
		}
		cursor = max(cursor, int64(op.At/tick)+1)
		switch op.Kind {
		case OpSetInactivity:
			idle, inact = op.D, 0
			if op.D > 0 {
				inact = op.At + op.D
			}
			rearm()
		case OpSetActive:
			active = 0
			if op.D > 0 {
				active = op.At + op.D
			}
			rearm()
		case OpActivity:
			if idle > 0 && op.At+idle > inact {
				inact = op.At + idle
			}
		case OpClose:
			idle, inact, active, scheduled = 0, 0, 0, false
		}
	}
	for scheduled && time.Duration(next())*tick <= until { // bounded: each visit moves the cursor on
		visit(next())
	}
	return p, nil
}

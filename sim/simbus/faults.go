package simbus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxPartitions bounds the partition windows of one subscriber.
const maxPartitions = 10_000

// Window is an interval of virtual time [Start, End), as offsets from
// sim.Epoch (the run's s.Elapsed()), during which a subscriber is
// disconnected.
type Window struct{ Start, End time.Duration }

func (w Window) String() string { return fmt.Sprintf("[+%v,+%v)", w.Start, w.End) }

// Reconnect makes a subscriber drop its connection at random instants, on
// average every MeanEvery (exponentially distributed), and stay away for a
// gap uniform in [MinGap, MaxGap]. Redis pub/sub keeps nothing for a client
// that is away: what is published meanwhile is lost. The zero Reconnect is
// off.
type Reconnect struct {
	MeanEvery      time.Duration
	MinGap, MaxGap time.Duration
}

func (rc Reconnect) on() bool { return rc != Reconnect{} }

// Faults is what can go wrong between the bus and one subscriber. The zero
// Faults (see Reliable) delivers every message once, at once, in order.
//
// A message is lost when any of these happens, and its Record says which
// (first match). First, the subscriber is disconnected at some instant of
// its flight [sent, arrival], by a partition window or a reconnect gap. In
// flight messages die with the connection, as Redis drops a disconnected
// client's output buffer. Second, a random loss (LossProb). Third, the
// subscriber's queue is full (overflow).
type Faults struct {
	// LossProb is the probability that a message is dropped.
	LossProb float64
	// Delay is the time in flight. Messages that are not reordered arrive in
	// publish order (a TCP connection is FIFO): one arriving earlier than
	// its predecessor waits for it.
	Delay Delay
	// DupProb is the probability that a delivered message is delivered a
	// second time, one more Delay later (an at-least-once relay, a retried
	// publish).
	DupProb float64
	// ReorderProb is the probability that a message is held back an extra
	// ReorderMin–ReorderMax, outside the FIFO order, so later messages may
	// overtake it.
	ReorderProb            float64
	ReorderMin, ReorderMax time.Duration
	// Partitions are fixed windows when the subscriber is disconnected.
	Partitions []Window
	// Reconnect adds random disconnections.
	Reconnect Reconnect
	// Slowdowns are fixed windows when the link is slow (see Slowdown).
	Slowdowns []Slowdown
}

// Reliable returns the Faults of a perfect bus: no loss, no delay, no
// duplicates, no reordering, never disconnected. The one-pod
// linearizability scenarios (MS-3, OC-6) use it.
func Reliable() Faults { return Faults{} }

// Validate reports the first problem with f, or nil.
func (f Faults) Validate() error {
	if err := validProb("LossProb", f.LossProb); err != nil {
		return err
	}
	if err := validProb("DupProb", f.DupProb); err != nil {
		return err
	}
	if err := validProb("ReorderProb", f.ReorderProb); err != nil {
		return err
	}
	if err := f.Delay.Validate(); err != nil {
		return err
	}
	switch {
	case f.ReorderMin < 0 || f.ReorderMin > f.ReorderMax || f.ReorderMax > maxDelay:
		return fmt.Errorf("simbus: reorder hold must satisfy 0 <= ReorderMin <= ReorderMax <= %v, got [%v, %v]", maxDelay, f.ReorderMin, f.ReorderMax)
	case f.ReorderProb > 0 && f.ReorderMax == 0:
		return fmt.Errorf("simbus: ReorderProb is %v but the hold [%v, %v] is empty", f.ReorderProb, f.ReorderMin, f.ReorderMax)
	case len(f.Partitions) > maxPartitions:
		return fmt.Errorf("simbus: %d partition windows, at most %d", len(f.Partitions), maxPartitions)
	}
	ws := slices.Clone(f.Partitions)
	slices.SortFunc(ws, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	for i, w := range ws {
		if w.Start < 0 || w.End <= w.Start {
			return fmt.Errorf("simbus: partition window %v must have 0 <= Start < End", w)
		}
		if i > 0 && w.Start < ws[i-1].End {
			return fmt.Errorf("simbus: partition windows %v and %v overlap", ws[i-1], w)
		}
	}
	if err := validateSlowdowns(f.Slowdowns); err != nil {
		return err
	}
	if rc := f.Reconnect; rc.on() {
		switch {
		case rc.MeanEvery < time.Millisecond:
			return fmt.Errorf("simbus: Reconnect.MeanEvery must be at least 1ms, got %v", rc.MeanEvery)
		case rc.MinGap <= 0 || rc.MinGap > rc.MaxGap || rc.MaxGap > maxDelay:
			return fmt.Errorf("simbus: Reconnect gaps must satisfy 0 < MinGap <= MaxGap <= %v, got [%v, %v]", maxDelay, rc.MinGap, rc.MaxGap)
		}
	}
	return nil
}

// sortedPartitions returns the windows in time order (Validate has checked
// that they do not overlap).
func (f Faults) sortedPartitions() []Window {
	ws := slices.Clone(f.Partitions)
	slices.SortFunc(ws, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	return ws
}

// String describes f for a run header, e.g. "loss=5% delay=0s–5ms dup=off
// reorder=off partitions=[+1s,+3s) reconnect=off".
func (f Faults) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "loss=%s delay=%v dup=%s", pct(f.LossProb), f.Delay, pct(f.DupProb))
	if f.ReorderProb > 0 {
		fmt.Fprintf(&b, " reorder=%s by %v–%v", pct(f.ReorderProb), f.ReorderMin, f.ReorderMax)
	} else {
		b.WriteString(" reorder=off")
	}
	b.WriteString(" partitions=")
	if len(f.Partitions) == 0 {
		b.WriteString("none")
	}
	for i, w := range f.sortedPartitions() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.String())
	}
	if rc := f.Reconnect; rc.on() {
		fmt.Fprintf(&b, " reconnect=every ~%v for %v–%v", rc.MeanEvery, rc.MinGap, rc.MaxGap)
	} else {
		b.WriteString(" reconnect=off")
	}
	b.WriteString(slowdownsString(f.Slowdowns))
	return b.String()
}

func pct(p float64) string {
	if p == 0 {
		return "off"
	}
	return fmt.Sprintf("%.3g%%", 100*p)
}

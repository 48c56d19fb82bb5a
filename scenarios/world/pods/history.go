package pods

import (
	"fmt"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Class says which claim a read serves.
type Class uint8

const (
	// NonMember: an OC read of a channel the reader never has a membership
	// in, so any grant comes from the open half (OC-2, OC-3, OC-4).
	NonMember Class = iota + 1
	// Member: an OC read of a channel that is never open, so any grant
	// comes from the member half (OC-6, OC-7).
	Member
	// Membership: an MS channel check (MS-2, MS-3, MS-10).
	Membership
	// Subscription: an MS check of an explicit channel subscription, which
	// confirms a denial against the database (MS-12).
	Subscription
)

func (c Class) String() string {
	switch c {
	case NonMember:
		return "non-member"
	case Member:
		return "member"
	case Membership:
		return "membership"
	case Subscription:
		return "subscription"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// ReadOp is one recorded answer for one key.
type ReadOp struct {
	Key            Key
	Class          Class
	Pod, Client    int
	Invoke, Return int64 // virtual ns since sim.Epoch
	// InvokeSeq and ReturnSeq order the operation's ends among every other
	// operation's: a logical clock bumped at each invocation and return.
	// Many operations share one virtual instant (a cache hit takes no
	// virtual time), and stamps that tie would make porcupine treat them
	// as concurrent and miss violations among them; one task runs at a
	// time, so the logical clock is the exact real-time order.
	InvokeSeq, ReturnSeq int64
	Granted              bool
	// Event is the answer's event in the run's record (record.NoEvent when
	// the run keeps none), for the checks to blame.
	Event record.EventID
}

// WriteOp is a change of one key's truth by an admin, from the start of the
// write to the end of the local invalidation on the admin's pod: the
// interval porcupine places the change in.
type WriteOp struct {
	Key                Key
	Value              bool
	Call, Return       int64 // virtual ns
	CallSeq, ReturnSeq int64 // logical order, as for ReadOp
	Pod                int
	// Event is the write's answer in the run's record and Commit its
	// database commit (record.NoEvent when the run keeps no record).
	Event, Commit record.EventID
}

// History is every answer and every truth-changing write of a run, bounded.
type History struct {
	Reads  []ReadOp
	Writes []WriteOp
	max    int
	s      *sim.Sim // the world's run, for blaming what a check finds; nil outside a world
}

// NewHistory returns a history that refuses to grow past maxOps operations.
func NewHistory(maxOps int) *History { return &History{max: maxOps} }

func (h *History) full() bool { return len(h.Reads)+len(h.Writes) >= h.max }

// StalenessReads returns the reads of the given classes for checks.Staleness.
func (h *History) StalenessReads(classes ...Class) []checks.Read {
	return h.ReadsWhere(func(r ReadOp) bool { return hasClass(classes, r.Class) })
}

// ReadsWhere returns the reads keep selects, for checks.Staleness.
func (h *History) ReadsWhere(keep func(ReadOp) bool) []checks.Read {
	var out []checks.Read
	for i, r := range h.Reads {
		if !keep(r) {
			continue
		}
		out = append(out, checks.Read{ID: i, Key: r.Key.String(), Invoke: r.Invoke, Return: r.Return, Granted: r.Granted})
	}
	return out
}

// LinOps returns the reads of the given classes and every write of their
// keys, for checks.Linearizable, stamped with the logical clock (ReadOp's
// InvokeSeq) so that operations at one virtual instant keep their order.
func (h *History) LinOps(classes ...Class) []checks.LinOp {
	var out []checks.LinOp
	keys := map[Key]bool{}
	for _, r := range h.Reads {
		if !hasClass(classes, r.Class) {
			continue
		}
		keys[r.Key] = true
		out = append(out, checks.LinOp{Key: r.Key.String(), Value: r.Granted, Call: r.InvokeSeq, Return: r.ReturnSeq, Pod: r.Pod, Client: r.Client})
	}
	for _, w := range h.Writes {
		if keys[w.Key] {
			out = append(out, checks.LinOp{Key: w.Key.String(), Write: true, Value: w.Value, Call: w.CallSeq, Return: w.ReturnSeq, Pod: w.Pod, Client: -1})
		}
	}
	return out
}

// Describe renders read i for a witness.
func (h *History) Describe(i int) string {
	if i < 0 || i >= len(h.Reads) {
		return fmt.Sprintf("read #%d (out of range)", i)
	}
	r := h.Reads[i]
	return fmt.Sprintf("read #%d %s %s on pod %d by client %d: granted=%v, invoked +%v, returned +%v",
		i, r.Class, r.Key, r.Pod, r.Client, r.Granted, nsDur(r.Invoke), nsDur(r.Return))
}

func hasClass(cs []Class, c Class) bool {
	if len(cs) == 0 {
		return true
	}
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// StaleAfterWrite finds, for key, a read that started after a write of the
// key had completed (in the logical order) and still returned the value
// from before that write, with no later write it could have seen: the
// plainest counterexample to linearizability. It returns a description of
// the write and the read, or "" if there is none.
func (h *History) StaleAfterWrite(key string) string {
	var writes []WriteOp
	for _, w := range h.Writes {
		if w.Key.String() == key {
			writes = append(writes, w)
		}
	}
	for i, r := range h.Reads {
		if r.Key.String() != key {
			continue
		}
		// The last write that completed before r began, and whether any
		// write overlaps r (then r may legitimately see either value).
		var last *WriteOp
		overlaps := false
		for j := range writes {
			w := &writes[j]
			if w.ReturnSeq < r.InvokeSeq {
				if last == nil || w.ReturnSeq > last.ReturnSeq {
					last = w
				}
			} else if w.CallSeq < r.ReturnSeq {
				overlaps = true
			}
		}
		if last != nil && !overlaps && r.Granted != last.Value {
			if h.s != nil && h.s.Recording() {
				h.s.Blame(r.Event, "not linearizable: read #%d of %s started after a write set it to %v and returned %v", i, key, last.Value, r.Granted)
				h.s.Blame(last.Event, "made read #%d stale: it started after this write of %s completed", i, key)
			}
			return fmt.Sprintf("write: %s set %s to %v on pod %d, from +%v to +%v\nread:  %s, started after that write completed",
				key, "granted", last.Value, last.Pod, nsDur(last.Call), nsDur(last.Return), h.Describe(i))
		}
	}
	return ""
}

package pods

import (
	"encoding/binary"
	"strconv"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Family says which rule decides a key's truth.
type Family uint8

const (
	// OC keys are "may reader access channel": a membership or an open,
	// listed channel, never a deleted one or one of another community.
	OC Family = iota + 1
	// MS keys are "is user an active member of channel": the membership
	// cache's answer.
	MS
)

// Key is a tracked (subject, channel) pair of one community.
type Key struct {
	Family             Family
	Community, Subject authz.ID
	Channel            authz.ID
}

// Short names an ID built by authz.NewID, e.g. "u12" for NewID('u', 12);
// other IDs print in full.
func Short(id authz.ID) string {
	var buf [21]byte
	return string(appendShort(buf[:0], id))
}

// appendShort appends Short(id) to b. Every read and write labels itself
// with its key (sim.KeepFor) on every call, so this is on the workload's
// hot path: it formats without fmt.
func appendShort(b []byte, id authz.ID) []byte {
	if id[0] >= 'a' && id[0] <= 'z' && id[1] == 0 && id[2] == 0 && id[3] == 0 && id[4] == 0 && id[5] == 0 && id[6] == 0 && id[7] == 0 {
		return strconv.AppendUint(append(b, id[0]), binary.BigEndian.Uint64(id[8:]), 10)
	}
	return append(b, id.String()...)
}

func (k Key) String() string {
	var buf [3 + 3*21 + 3]byte
	b := append(buf[:0], "oc/"...)
	if k.Family == MS {
		b = append(buf[:0], "ms/"...)
	}
	b = append(appendShort(b, k.Community), '/')
	b = append(appendShort(b, k.Subject), '/')
	return string(appendShort(b, k.Channel))
}

func (k Key) eval(t *authztest.Tables) bool {
	if k.Family == MS {
		return t.IsActiveMember(k.Community, k.Subject, k.Channel)
	}
	return t.Accessible(k.Community, k.Subject, k.Channel)
}

// Tracker keeps the truth of every tracked key at every commit instant: the
// checkers' source of truth. After each write it re-evaluates every tracked
// key on the committed state and commits the ones that changed, at the
// write's commit instant.
type Tracker struct {
	keys   []Key
	names  []string
	cur    []bool
	index  map[Key]int
	byName map[string]int
	truth  checks.Truth
	// events are each key's commits in the run's record, parallel to its
	// commits in truth.
	events [][]record.EventID
}

// NewTracker returns a tracker with no keys.
func NewTracker() *Tracker {
	return &Tracker{index: map[Key]int{}, byName: map[string]int{}, truth: checks.Truth{}}
}

// Track declares k with its value on t (the state before the workload).
func (tr *Tracker) Track(t *authztest.Tables, k Key) error {
	if _, ok := tr.index[k]; ok {
		return nil
	}
	v := k.eval(t)
	name := k.String()
	if err := tr.truth.Declare(name, v); err != nil {
		return err
	}
	tr.index[k] = len(tr.keys)
	tr.byName[name] = len(tr.keys)
	tr.keys = append(tr.keys, k)
	tr.names = append(tr.names, name)
	tr.cur = append(tr.cur, v)
	tr.events = append(tr.events, nil)
	return nil
}

// Changed is a key whose truth a write changed.
type Changed struct {
	Key   Key
	Value bool
}

// afterWrite re-evaluates every key on t after a commit at atNs (recorded
// as ev) and returns the keys that changed.
func (tr *Tracker) afterWrite(t *authztest.Tables, atNs int64, ev record.EventID) ([]Changed, error) {
	var out []Changed
	for i, k := range tr.keys {
		v := k.eval(t)
		if v == tr.cur[i] {
			continue
		}
		tr.cur[i] = v
		if err := tr.truth.Commit(tr.names[i], atNs, v); err != nil {
			return nil, err
		}
		tr.events[i] = append(tr.events[i], ev)
		out = append(out, Changed{k, v})
	}
	return out, nil
}

// CommitEvent returns the recorded event of the commit that is the i-th
// entry of key's truth (checks.Witness.EndIndex), or record.NoEvent.
func (tr *Tracker) CommitEvent(key string, i int) record.EventID {
	k, ok := tr.byName[key]
	if !ok || i < 0 || i >= len(tr.events[k]) {
		return record.NoEvent
	}
	return tr.events[k][i]
}

// Truth returns the truth of every tracked key, for the checkers.
func (tr *Tracker) Truth() checks.Truth { return tr.truth }

// Initial returns each key's value before the workload, for porcupine.
func (tr *Tracker) Initial() map[string]bool {
	out := make(map[string]bool, len(tr.keys))
	for _, name := range tr.names {
		out[name] = tr.truth[name].Initial
	}
	return out
}

// Tracked reports whether k is tracked.
func (tr *Tracker) Tracked(k Key) bool {
	_, ok := tr.index[k]
	return ok
}

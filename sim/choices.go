package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// The world's choices: every value a run draws through Sim.Rand, and every
// answer of Sim.Keep. Recorded (protocol.Options.RecordChoices), they are the run's
// workload and faults as data; replayed (protocol.Options.ReplayChoices), an edited
// copy is an edited run. This is how rapid and Hypothesis shrink: shorter
// lists, smaller values and dropped elements mean fewer operations, smaller
// values and no fault. The schedule is not among them: it has its own
// stream (and its own recording, Result.Decisions), so a shrinker edits the
// two apart.
//
// The draws are one list in the order they were made. Past its end every
// draw is the smallest value that terminates (1: a zero would spin
// math/rand's rejection sampling forever). A run that keeps drawing past
// the end (maxOverrun draws) panics, so an edited list cannot hang a run.
// The Keep answers are lists of their own, one per Keepable, indexed
// by the ordinal of the Keep call of that kind. Dropping the 7th operation
// leaves the 8th the 8th, whatever the 7th would have drawn. Past the end
// of a Keep list the answer is false, so a list cut short drops every
// later operation (or fault).
//
// A recorded run's choices can be replayed keyed (protocol.Keeps.ChoiceKeys
// set, which a shrinker and a shrunk replay file do). Every draw and every
// Keep answer then says which task made it, and its ordinal among that
// task's draws or Keep calls of the kind (protocol.KeepKey). The replay
// hands each task's n-th draw and answer back by that key, not by the
// run's ordinal. A key the list does not hold answers false, or draws a
// value of its own (freshDraw).
//
// The run's ordinal is fragile under edits. A client whose loop is bounded
// by virtual time makes more draws and Keep calls once its operations are
// dropped (they take no time). Tasks interleave differently once the
// schedule changes. Either moves every later ordinal onto another task's
// call. Keyed, dropping one task's operations leaves every other task's
// draws and answers where they were. What a component draws and asks Keep
// while serving one of a task's operations (a statement's latency and
// fault, inside protocol.Inside) is keyed by that operation. So dropping
// it moves none of the task's other draws or answers onto another
// operation's. Draws and answers are
// keyed together or not at all: a task's Keep follows its own draws, and
// keying one of the two would pair answers with other tasks' draws.

// ErrDropped is what a world's client operation returns when Keep dropped
// it (a world may wrap it). A dropped operation was never made. A check
// that reports one as a failure ("the follow-up did not proceed: operation
// dropped") judges the shrinker's edit, not the code. So the shrinker
// refuses every candidate whose failure mentions it (sim/shrink).
var ErrDropped = errors.New("operation dropped by the run's choices (sim.Keep)")

// Keepable names what a Keep decision keeps or drops: KeepOperation or
// KeepFault.
type Keepable = protocol.Keepable

const (
	// KeepOperation is one client operation of a workload: dropped, the
	// client skips it.
	KeepOperation = protocol.KeepOperation
	// KeepFault is one injected fault (a lost message, a failed read, a
	// restart): dropped, the world does not inject it.
	KeepFault = protocol.KeepFault

	keepKinds = protocol.KeepKinds
)

// The protocol's types, by their short names here.
type (
	keepKey  = protocol.KeepKey
	keepSite = protocol.KeepSite
)

const (
	noPos  = protocol.NoPos
	opMark = protocol.OpMark
)

// maxOverrun is how many draws past the end of a replayed choice list a run
// may make before it panics.
const maxOverrun = 1 << 20

// worldSource is the world stream's source: the seed's PCG, or a given list
// of choices; optionally recording what it hands out.
type worldSource struct {
	pcg    *rand.PCG
	replay bool // draw from list and keeps, not from pcg
	list   []uint64
	pos    int
	keeps  protocol.Keeps
	asked  [keepKinds]int // Keep calls so far, by kind
	// recorded counts the recorded Keep sites, by kind: a keyed replay
	// skips some (decide), so it can be below asked.
	recorded [keepKinds]int
	// A keyed replay (keeps.ChoiceKeys set): ix[0] finds a draw's key's
	// index in list, ix[kind] a Keep call's key's answer (built by
	// Keeps.IndexKeys). overrun counts draws no key answered.
	keyed   bool
	seed    uint64 // for draws a keyed list does not hold (freshDraw)
	ix      *protocol.KeyIndexes
	overrun int
	// byTask are the tasks' keys' names and draws and Keep calls so far,
	// by task id + 1 (slot 0: outside every task); recKeys the recorded
	// draws' keys. Kept only when keyed or recording.
	s         *Sim
	byTask    []taskKeeps
	nameCount map[string]int // tasks named so far, by name
	recKeys   []keepKey

	record bool
	max    int
	rec    []uint64
	cut    bool
	sites  []keepSite
}

// Uint64 implements rand.Source.
func (w *worldSource) Uint64() uint64 {
	var v uint64
	var key keepKey
	pos := noPos
	if w.keyed || w.record {
		key, pos = w.s.taskKey(0)
	}
	switch {
	case w.keyed:
		if j := pos; j != noPos && j < len(w.list) {
			v = w.list[j]
		} else {
			// A draw the recorded run never made (a loop that runs longer
			// once its operations are dropped) gets a value of its own,
			// from its key. The smallest one would make every wait of such
			// a loop zero, and the loop would spin to its limit.
			if w.overrun >= maxOverrun {
				panic(fmt.Sprintf("sim: the run drew %d values its %d choices do not hold: an edited choice list that never ends the run", maxOverrun, len(w.list)))
			}
			w.overrun++
			v = freshDraw(w.seed, key)
		}
	case w.replay:
		v = 1
		if w.pos < len(w.list) {
			v = w.list[w.pos]
		} else if w.pos-len(w.list) >= maxOverrun {
			panic(fmt.Sprintf("sim: the run drew %d values past the end of its %d choices: an edited choice list that never ends the run", maxOverrun, len(w.list)))
		}
		w.pos++
	default:
		v = w.pcg.Uint64()
	}
	if w.record {
		if len(w.rec) >= w.max {
			w.cut = true
		} else {
			w.rec = append(w.rec, v)
			w.recKeys = append(w.recKeys, key)
		}
	}
	return v
}

// presize gives a recording keyed replay room for about as many draws
// and Keep sites as the run it edits made. A shrinker's re-runs record
// tens of thousands of each; growing the lists by doubling would spend a
// re-run's time copying them, and the collector's scanning the copies.
func (w *worldSource) presize(k protocol.Keeps) {
	if !w.record {
		return
	}
	if n := min(len(k.ChoiceKeys), w.max); n > 0 {
		w.rec, w.recKeys = make([]uint64, 0, n), make([]keepKey, 0, n)
	}
	if n := min(len(k.OperationKeys)+len(k.FaultKeys), w.max); n > 0 {
		w.sites = make([]keepSite, 0, n)
	}
}

// freshDraw is a keyed replay's value for a draw its list does not hold.
// It is a hash of the seed and the draw's key (splitmix64 over FNV-1a), so
// that it is the same in every replay.
func freshDraw(seed uint64, key keepKey) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key.Task); i++ {
		h = (h ^ uint64(key.Task[i])) * 1099511628211
	}
	z := seed ^ h ^ (uint64(key.N) * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// taskKeeps is one task's Keep state: its key's name and its calls so
// far, by kind. For what it draws and asks inside an operation (Inside),
// it also holds the operation's key name and the calls so far within it.
type taskKeeps struct {
	name  string
	asked [keepKinds]int // [0]: draws; [kind]: Keep calls
	// In a keyed replay, the dense positions of the name's keys, by slot
	// (keyIndex.slice, looked up once), and the last call the lists
	// answer true, by kind (KeepsLeft; -1: none).
	at      [keepKinds][]int32
	last    [keepKinds]int
	lastSet [keepKinds]bool

	opSet   bool
	op      int    // the operation: the task's KeepOperation calls before it
	opName  string // name + opMark + op
	opAsked [keepKinds]int
	opAt    [keepKinds][]int32
}

// decide answers one Keep. From the seed it answers true, which draws
// nothing, so that adding a Keep to a workload changes none of its seeds.
// When replaying it answers the kind's list entry (false past its end): by
// key for a keyed list, else by the run's ordinal.
func (w *worldSource) decide(what Keepable, label string, key keepKey, pos int) bool {
	i := w.asked[what]
	w.asked[what]++
	keep := true
	if w.replay {
		l := w.keeps.List(what)
		if w.keyed {
			keep = pos != noPos && pos < len(l) && l[pos]
			if pos == noPos && w.keeps.Beyond != nil {
				keep = w.keeps.Beyond.Past(what, key)
			}
		} else {
			keep = i < len(l) && l[i]
		}
	}
	// A keyed replay records no call it answers false: an unlisted key is
	// answered false too, so the recording replays the same without it.
	// Why: a shrinker's edited run may ask far more Keep calls than the
	// run it edits, all of them dropped. A thread whose opens were dropped
	// never fills its queue, so every burst asks for its full size (ten
	// times the calls in TW-10's world). Recording each would be most of
	// such a re-run. The sites' Index is then the recorded
	// position, which is what KeepsOf lists it at.
	if w.record && (keep || !w.keyed) {
		if len(w.sites) >= w.max {
			w.cut = true
		} else {
			w.sites = append(w.sites, keepSite{What: what, Index: w.recorded[what], Key: key, Label: label, Kept: keep})
			w.recorded[what]++
		}
	}
	return keep
}

// taskKey is the key of the current task's next draw (slot 0) or Keep
// call of a kind (slot = the Keepable), counting it. In a keyed replay it
// also returns the key's position in its list (noPos if the list does not
// hold it).
func (s *Sim) taskKey(slot int) (keepKey, int) {
	w := s.worldSrc
	st := s.taskKeeps()
	inside := s.insideMain
	if t := s.current; t != nil {
		inside = t.inside
	}
	if inside > 0 {
		if op := st.asked[KeepOperation]; !st.opSet || st.op != op {
			st.opSet, st.op, st.opAsked = true, op, [keepKinds]int{}
			st.opName = st.name + opMark + strconv.Itoa(op)
			if w.ix != nil {
				for k := range st.opAt {
					st.opAt[k] = w.ix[k].Slice(st.opName)
				}
			}
		}
		n := st.opAsked[slot]
		st.opAsked[slot]++
		key := keepKey{Task: st.opName, N: n}
		return key, w.position(slot, st.opAt[slot], key)
	}
	n := st.asked[slot]
	st.asked[slot]++
	key := keepKey{Task: st.name, N: n}
	return key, w.position(slot, st.at[slot], key)
}

// taskKeeps is the current task's Keep state (slot 0 outside every task).
func (s *Sim) taskKeeps() *taskKeeps {
	w := s.worldSrc
	if len(w.byTask) == 0 {
		w.byTask = append(w.byTask, taskKeeps{}) // outside every task: a sequence of its own
	}
	idx := 0
	if t := s.current; t != nil {
		idx = int(t.id) + 1
	}
	// Name every task up to this one, in spawn order (task ids are), each
	// once: the k-th task of a name is "name#k".
	for len(w.byTask) <= idx {
		o := s.tasks[len(w.byTask)-1]
		if w.nameCount == nil {
			w.nameCount = map[string]int{}
		}
		w.nameCount[o.name]++
		name := strings.ReplaceAll(o.name, "\x00", "\uFFFD") // a key's NUL is opMark's
		if k := w.nameCount[o.name]; k > 1 {
			name = fmt.Sprintf("%s#%d", name, k)
		}
		st := taskKeeps{name: name}
		if w.ix != nil {
			for k := range st.at {
				st.at[k] = w.ix[k].Slice(name)
			}
		}
		w.byTask = append(w.byTask, st)
	}
	return &w.byTask[idx]
}

// position is key's position in the slot's keyed list, whose task's
// dense positions are sl; noPos when the replay is not keyed.
func (w *worldSource) position(slot int, sl []int32, key keepKey) int {
	if w.ix == nil {
		return noPos
	}
	return w.ix[slot].Find(sl, key)
}

// inside marks what the current task draws from the world stream and asks
// Keep, from now until End, as made inside its current operation by a
// component serving it (protocol.Inside). Such calls are a database
// statement's latency, error and fault, a message's delay and loss. The
// workload's own draws
// (which operation, on which key, how long to think) are made outside. A
// seed's run is the same with or without it. A keyed replay
// (Keeps.ChoiceKeys) keys the marked calls by the operation (the task's
// count of KeepOperation calls before it) and their ordinal within it. A
// shrinker may drop an operation, whose statements then draw nothing and
// inject nothing. Every other operation's draws and faults, and the
// workload's, then stay where they were. Keyed by the task's ordinal
// alone, every later one of its draws would move onto another. Scopes
// nest; End closes the one inside opened.
func (s *Sim) inside() protocol.Scope {
	if t := s.current; t != nil {
		return protocol.NewScope(&t.inside)
	}
	return protocol.NewScope(&s.insideMain)
}

// Keep asks whether the run includes one optional element of its workload
// or fault plan: a client operation (KeepOperation) or an injected fault
// (KeepFault). A seed's own run keeps everything, and asking draws nothing
// from the world stream. A run replayed with edited Keep lists
// (protocol.Options.Keeps) keeps what they say, which is how a shrinker drops
// operations and faults. A workload asks before each operation, after its
// own draws, and skips the ones dropped; a fault plan asks once it has
// decided to inject.
//
// Keep is a choice of the world, like a draw from Rand: call it in a
// deterministic place.
func (s *Sim) Keep(what Keepable) bool { return s.KeepFor(what, "") }

// KeepFor is Keep with a label saying what the element is about: the key
// an operation reads or writes, the connection it touches. A shrinker
// tries first to keep only the elements whose labels the failure names
// (the key of the stale read, say), which drops most of a workload in one
// re-run.
func (s *Sim) KeepFor(what Keepable, label string) bool {
	if !what.Valid() {
		panic(fmt.Sprintf("sim: Keep(%d): want KeepOperation or KeepFault", what))
	}
	if s.worldSrc.replay {
		// Only replayed lists are state the answer depends on; a seed's
		// Keep is always true and orders nothing (see Explore).
		s.touch(objWorld)
	}
	var key keepKey
	pos := noPos
	if s.worldSrc.keyed || s.worldSrc.record {
		key, pos = s.taskKey(int(what))
	}
	keep := s.worldSrc.decide(what, label, key, pos)
	c := &s.recorded.Kept
	if !keep {
		c = &s.recorded.Dropped
	}
	switch what {
	case KeepOperation:
		c.Operations++
	case KeepFault:
		c.Faults++
	}
	return keep
}

// KeepsLeft reports whether a later Keep call of the kind by the current
// task may be answered true. It is false only in a keyed replay (a
// shrinker's re-run) whose list answers every later call of the task's
// false. A workload loop may then end, sleeping out the time it had left
// if others count on it. Otherwise it runs an idle tail whose every
// operation is dropped. Such tails were most of a truncated shrink's
// re-runs: forty clients pausing and skipping to the horizon long after
// the last operation kept. A seed's run, or a replay by ordinal, keeps
// asking: it always reports true, and asking draws nothing.
func (s *Sim) KeepsLeft(what Keepable) bool {
	if !what.Valid() {
		panic(fmt.Sprintf("sim: KeepsLeft(%d): want KeepOperation or KeepFault", what))
	}
	w := s.worldSrc
	if !w.keyed || w.ix == nil {
		return true
	}
	if w.keeps.Beyond != nil {
		return true // the task's calls past the recorded run's end are kept
	}
	inside := s.insideMain
	if t := s.current; t != nil {
		inside = t.inside
	}
	if inside > 0 {
		return true // a component's calls are keyed by its operation
	}
	s.touch(objWorld) // the answer depends on the replayed lists
	st := s.taskKeeps()
	if !st.lastSet[what] {
		st.lastSet[what], st.last[what] = true, -1
		l := w.keeps.List(what)
		for n, j := range st.at[what] {
			if j != noPos && int(j) < len(l) && l[j] {
				st.last[what] = n
			}
		}
		// The keys the index filed sparse count as much: the answer must
		// not depend on how the keys are filed. A recording leaves out
		// the calls it answered false. So a run's own keys can be dense
		// while its recording's, the same answers with gaps, are filed
		// sparse. Answering true for a sparse index ("do not guess") would
		// make the recording's replay run tails the run had ended: a
		// shrunk run that does not replay its own failure.
		for k, j := range w.ix[what].Sparse { //windtunnel:unordered a maximum
			if k.Task == st.name && k.N > st.last[what] && j < len(l) && l[j] {
				st.last[what] = k.N
			}
		}
	}
	return st.asked[what] <= st.last[what]
}

// recordPromises records, at the end of a recording keyed replay, the
// call each task's KeepsLeft was promised but never reached. For a task
// that asked KeepsLeft, that is the last of its calls the lists answer
// true, if the task never made it (its loop ended another way: the run's
// end, a limit). The recording lists only the calls made. Without the
// promise it would answer that task's KeepsLeft false where the run
// answered true. Its replay would then end a loop the run went on with: a
// shrunk run that does not replay its failure. The
// promise is a kept call like any other: a later run that reaches it
// keeps it, as the run's lists would have, and a shrinker may drop it.
func (w *worldSource) recordPromises() {
	if !w.keyed || !w.record {
		return
	}
	for _, st := range w.byTask {
		for _, what := range [...]Keepable{KeepOperation, KeepFault} {
			if !st.lastSet[what] || st.last[what] < st.asked[what] {
				continue
			}
			if len(w.sites) >= w.max {
				w.cut = true
				return
			}
			w.sites = append(w.sites, keepSite{What: what, Index: w.recorded[what], Key: keepKey{Task: st.name, N: st.last[what]}, Kept: true})
			w.recorded[what]++
		}
	}
}

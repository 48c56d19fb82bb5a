package sim

//lint:file-ignore SA2001 a lock taken and released with nothing between is a scheduling point (and a recorded event) these tests count

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// choiceWorkload issues a drawn number of operations, each kept or dropped,
// with a drawn value, and injects a fault on some.
func choiceWorkload(s *Sim) (ops []int, faults int) {
	n := 3 + s.Rand().IntN(5)
	for i := range n {
		v := s.Rand().IntN(100)
		if !s.Keep(KeepOperation) {
			continue
		}
		ops = append(ops, v)
		if i%2 == 0 && s.Keep(KeepFault) {
			faults++
		}
	}
	return ops, faults
}

func TestChoicesReplayTheSeedsRun(t *testing.T) {
	var a, b []int
	rec := Run(withReplay(Config{Seed: 11}, protocol.Options{RecordChoices: true}), func(s *Sim) { a, _ = choiceWorkload(s) })
	require.NoError(t, rec.Err)
	again := Run(withReplay(Config{Seed: 999}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: protocol.KeepsOf(rec.recorded.KeepSites), RecordChoices: true}), func(s *Sim) { b, _ = choiceWorkload(s) })
	require.NoError(t, again.Err)
	assert.Equal(t, a, b, "the recorded choices replay the same workload under another seed")
	assert.Equal(t, rec.recorded.Choices, again.recorded.Choices, "a replay records what it replayed")
	assert.Equal(t, rec.recorded.KeepSites, again.recorded.KeepSites)
	assert.Equal(t, int64(len(a)), rec.recorded.Kept.Operations)
}

func TestKeepDrawsNothingFromTheSeed(t *testing.T) {
	// Adding Keep to a workload must not change any seed's run.
	var with, without []int
	Run(Config{Seed: 5}, func(s *Sim) {
		for range 10 {
			if s.Keep(KeepOperation) {
				with = append(with, s.Rand().IntN(1000))
			}
		}
	})
	Run(Config{Seed: 5}, func(s *Sim) {
		for range 10 {
			without = append(without, s.Rand().IntN(1000))
		}
	})
	assert.Equal(t, without, with)
}

func TestEditedChoicesDropOperationsAndFaults(t *testing.T) {
	var ops []int
	var faults int
	rec := Run(withReplay(Config{Seed: 3}, protocol.Options{RecordChoices: true}), func(s *Sim) { ops, faults = choiceWorkload(s) })
	require.NoError(t, rec.Err)
	require.NotEmpty(t, rec.recorded.KeepSites)
	require.Positive(t, faults)

	// Drop every fault: the operations stay, and no fault is injected.
	keeps := protocol.KeepsOf(rec.recorded.KeepSites)
	var ops2 []int
	var faults2 int
	res := Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps.NoFaults()}), func(s *Sim) { ops2, faults2 = choiceWorkload(s) })
	require.NoError(t, res.Err)
	assert.Equal(t, ops, ops2)
	assert.Zero(t, faults2)
	assert.Equal(t, int64(faults), res.recorded.Dropped.Faults)

	// Drop the second operation: the others stay as they were, by ordinal.
	var ops4 []int
	res = Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps.Without(KeepOperation, 1)}), func(s *Sim) { ops4, _ = choiceWorkload(s) })
	require.NoError(t, res.Err)
	assert.Equal(t, append([]int{ops[0]}, ops[2:]...), ops4)

	// An empty list: every draw the smallest, every Keep false.
	var ops3 []int
	res = Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: []uint64{}}), func(s *Sim) { ops3, _ = choiceWorkload(s) })
	require.NoError(t, res.Err)
	assert.Empty(t, ops3)
	assert.Equal(t, int64(3), res.recorded.Dropped.Operations, "n = 3 + IntN(5) with the smallest draw")
}

func TestChoiceRecordIsBounded(t *testing.T) {
	res := Run(withReplay(Config{Seed: 1}, protocol.Options{RecordChoices: true, MaxChoices: 8}), func(s *Sim) {
		for range 100 {
			s.Rand().Uint64()
		}
	})
	require.NoError(t, res.Err)
	assert.Len(t, res.recorded.Choices, 8)
	assert.True(t, res.recorded.ChoicesCut)
}

func TestChoicesWithoutReplayIsAConfigError(t *testing.T) {
	res := Run(withReplay(Config{Seed: 1}, protocol.Options{Choices: []uint64{1}}), func(*Sim) {})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "ReplayChoices")
	res = Run(withReplay(Config{Seed: 1}, protocol.Options{Keeps: protocol.Keeps{Faults: []bool{true}}}), func(*Sim) {})
	require.Error(t, res.Err)
}

func TestKeepSitesCarryLabels(t *testing.T) {
	res := Run(withReplay(Config{Seed: 1}, protocol.Options{RecordChoices: true}), func(s *Sim) {
		s.KeepFor(KeepOperation, "k1")
		s.Keep(KeepFault)
		s.KeepFor(KeepOperation, "k2")
	})
	require.NoError(t, res.Err)
	assert.Equal(t, []protocol.KeepSite{
		{What: KeepOperation, Index: 0, Key: protocol.KeepKey{Task: "main", N: 0}, Label: "k1", Kept: true},
		{What: KeepFault, Index: 0, Key: protocol.KeepKey{Task: "main", N: 0}, Kept: true},
		{What: KeepOperation, Index: 1, Key: protocol.KeepKey{Task: "main", N: 1}, Label: "k2", Kept: true},
	}, res.recorded.KeepSites)
	bad := Run(Config{Seed: 1}, func(s *Sim) { s.Keep(Keepable(9)) })
	require.Error(t, bad.Err)
	assert.Contains(t, bad.Err.Error(), "want KeepOperation or KeepFault")
}

// twoYielders runs two tasks that each yield n times.
func twoYielders(n int) func(s *Sim) {
	return func(s *Sim) {
		wg := s.NewWaitGroup("both")
		wg.Add(2)
		for i := range 2 {
			s.Go(fmt.Sprintf("y%d", i), func() {
				defer wg.Done()
				for range n {
					s.Yield()
				}
			})
		}
		_ = wg.Wait(bg)
	}
}

func TestPreemptionsAreCountedAndListed(t *testing.T) {
	res := Run(Config{Seed: 7, RecordDecisions: true}, twoYielders(20))
	require.NoError(t, res.Err)
	assert.Positive(t, res.Preemptions, "a random walk over two yielding tasks preempts")
	assert.Len(t, res.PreemptionSteps, int(res.Preemptions))
	// A guided run with no decisions never preempts.
	g := Run(Config{Seed: 7, Strategy: newGuided(nil), RecordDecisions: true}, twoYielders(20))
	require.NoError(t, g.Err)
	assert.Zero(t, g.Preemptions)
	// Its own decisions replay it exactly.
	r := Run(Config{Seed: 7, Strategy: Replay(g.Decisions)}, twoYielders(20))
	require.NoError(t, r.Err)
	assert.Equal(t, g.Hash, r.Hash)
}

func TestGuidedFollowsThenContinues(t *testing.T) {
	orig := Run(Config{Seed: 7, RecordDecisions: true}, twoYielders(20))
	require.NoError(t, orig.Err)
	// The full list reproduces the run.
	full := Run(Config{Seed: 1, Strategy: newGuided(orig.Decisions)}, twoYielders(20))
	assert.Equal(t, orig.Hash, full.Hash)
	// Cut at the first preemption: the prefix is followed, nothing after
	// it preempts.
	cut := int(orig.PreemptionSteps[0])
	g := Run(Config{Seed: 1, Strategy: newGuided(orig.Decisions[:cut]), RecordDecisions: true}, twoYielders(20))
	require.NoError(t, g.Err)
	assert.Equal(t, orig.Decisions[:cut], g.Decisions[:cut])
	assert.Equal(t, int64(1), g.Preemptions)
}

func TestRecordHasLocksOpsAndSwitches(t *testing.T) {
	var op record.EventID
	res := Run(Config{Seed: 2, Record: true}, func(s *Sim) {
		mu := s.NewMutex("m")
		s.Go("other", func() { mu.Lock(); s.Yield(); mu.Unlock() })
		op = s.OpBegin("read %s", "k")
		mu.Lock()
		mu.Unlock()
		s.Blame(s.OpEnd(op, "granted"), "broke X-1")
		s.Tracef("world note")
	})
	require.NoError(t, res.Err)
	require.NotNil(t, res.Record)
	kinds := map[record.EventKind]int{}
	var blamed []record.Event
	for _, e := range res.Record.Events {
		kinds[e.Kind]++
		if e.Blame != "" {
			blamed = append(blamed, e)
		}
	}
	assert.Equal(t, 2, kinds[record.EventLock])
	assert.Equal(t, 2, kinds[record.EventUnlock])
	assert.Equal(t, 1, kinds[record.EventOpBegin])
	assert.Equal(t, 1, kinds[record.EventOpEnd])
	assert.Equal(t, 1, kinds[record.EventNote])
	assert.Positive(t, kinds[record.EventSwitch])
	require.Len(t, blamed, 1)
	assert.Equal(t, "broke X-1", blamed[0].Blame)
	assert.Equal(t, record.EventOpEnd, blamed[0].Kind)
	assert.Equal(t, int64(1), res.Operations)
	assert.Equal(t, []string{"main", "other"}, res.Record.Tasks)

	// The record does not change the run.
	plain := Run(Config{Seed: 2}, func(s *Sim) {
		mu := s.NewMutex("m")
		s.Go("other", func() { mu.Lock(); s.Yield(); mu.Unlock() })
		op = s.OpBegin("read %s", "k")
		mu.Lock()
		mu.Unlock()
		s.Blame(s.OpEnd(op, "granted"), "broke X-1")
		s.Tracef("world note")
	})
	assert.Equal(t, plain.Hash, res.Hash)
	assert.Nil(t, plain.Record)
	assert.Equal(t, record.NoEvent, op)
}

func TestRecordIsBounded(t *testing.T) {
	res := Run(Config{Seed: 2, Record: true, MaxRecord: 5}, func(s *Sim) {
		for range 50 {
			s.Tracef("x")
		}
	})
	require.NoError(t, res.Err)
	assert.Len(t, res.Record.Events, 5)
	assert.True(t, res.Record.Cut)
}

func TestTraceTailOfAPassingRun(t *testing.T) {
	res := Run(Config{Seed: 1, TraceTail: 4}, func(s *Sim) { s.Tracef("last words") })
	require.NoError(t, res.Err)
	assert.Nil(t, res.Tail, "a passing run formats no tail")
	assert.Contains(t, fmt.Sprint(res.tailLines()), "last words")
}

// TestKeyedReplayKeepsOtherTasksChoices: replayed keyed (KeepsOfRun), a
// task's draws and Keep answers are its own: dropping every operation of a
// client whose loop is bounded by virtual time (so that it loops, and
// draws, many more times once its operations take no time) leaves another
// task's draws and answers exactly as recorded. Replayed by the run's
// ordinals, the same edit hands the other task values the looping client
// was meant to draw (what made the operations pass of a shrink remove
// nothing from MS-7's workload: its directed follow-ups came after such a
// loop).
func TestKeyedReplayKeepsOtherTasksChoices(t *testing.T) {
	type seen struct {
		values []int
		kept   []bool
	}
	body := func(out *seen) func(s *Sim) {
		return func(s *Sim) {
			wg := s.NewWaitGroup("tasks")
			wg.Add(2)
			s.Go("looper", func() {
				defer wg.Done()
				for i := 0; i < 1000 && s.Elapsed() < time.Second; i++ {
					_ = s.Rand().IntN(100)
					if s.Keep(KeepOperation) {
						_ = s.Sleep(context.Background(), 10*time.Millisecond)
					}
				}
			})
			s.Go("other", func() {
				defer wg.Done()
				_ = s.Sleep(context.Background(), 500*time.Millisecond)
				for range 3 {
					out.values = append(out.values, s.Rand().IntN(1_000_000))
					out.kept = append(out.kept, s.Keep(KeepOperation))
				}
			})
			_ = wg.Wait(context.Background())
		}
	}
	var rec seen
	r := Run(withReplay(Config{Seed: 7}, protocol.Options{RecordChoices: true}), body(&rec))
	require.NoError(t, r.Err)
	keyed := protocol.KeepsOfRun(&r.recorded)
	var drop []int
	for i, site := range r.recorded.KeepSites {
		if site.Key.Task == "looper" {
			drop = append(drop, i)
		}
	}
	require.Greater(t, len(drop), 40, "the looper kept its operations in the seed's run")

	var got seen
	res := Run(withReplay(Config{Seed: 7}, protocol.Options{ReplayChoices: true, Choices: r.recorded.Choices, Keeps: keyed.Without(KeepOperation, drop...), RecordChoices: true}), body(&got))
	require.NoError(t, res.Err)
	assert.Equal(t, rec, got, "the other task drew and kept exactly what it did")
	assert.Greater(t, len(res.recorded.Choices), len(r.recorded.Choices), "the looper drew more once its operations took no time")

	// The same edit by ordinal: the other task gets the looper's values.
	byOrdinal := keyed.Without(KeepOperation, drop...)
	byOrdinal.ChoiceKeys = nil
	var shifted seen
	res = Run(withReplay(Config{Seed: 7}, protocol.Options{ReplayChoices: true, Choices: r.recorded.Choices, Keeps: byOrdinal}), body(&shifted))
	require.NoError(t, res.Err)
	assert.NotEqual(t, rec.values, shifted.values)

	// Dropping one of the other task's answers changes that answer only.
	var one seen
	var others []int
	for i, site := range r.recorded.KeepSites {
		if site.Key.Task == "other" {
			others = append(others, i)
		}
	}
	require.Len(t, others, 3)
	k := keyed.Without(KeepOperation, others[1])
	res = Run(withReplay(Config{Seed: 7}, protocol.Options{ReplayChoices: true, Choices: r.recorded.Choices, Keeps: k}), body(&one))
	require.NoError(t, res.Err)
	assert.Equal(t, rec.values, one.values)
	assert.Equal(t, []bool{true, false, true}, one.kept)
}

// TestKeyedReplayIsCheckedAndReproducesTheRun: a keyed replay of a run's
// own choices is that run, and keys that name a draw or an answer twice
// are a config error.
func TestKeyedReplayIsCheckedAndReproducesTheRun(t *testing.T) {
	var a, b []int
	rec := Run(withReplay(Config{Seed: 11, RecordDecisions: true}, protocol.Options{RecordChoices: true}), func(s *Sim) { a, _ = choiceWorkload(s) })
	require.NoError(t, rec.Err)
	again := Run(withReplay(Config{Seed: 11, RecordDecisions: true}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: protocol.KeepsOfRun(&rec.recorded)}), func(s *Sim) { b, _ = choiceWorkload(s) })
	require.NoError(t, again.Err)
	assert.Equal(t, a, b)
	assert.Equal(t, rec.Hash, again.Hash)

	bad := protocol.KeepsOfRun(&rec.recorded)
	require.NotEmpty(t, bad.ChoiceKeys)
	bad.ChoiceKeys = append([]protocol.KeepKey{bad.ChoiceKeys[0]}, bad.ChoiceKeys...)
	res := Run(withReplay(Config{Seed: 11}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: bad}), func(*Sim) {})
	require.ErrorContains(t, res.Err, `two choices for call 0 of task "main"`)
}

// Tasks of one name are told apart by spawn order in their keys: the
// second "worker" is "worker#2", whichever of the two asks first.
func TestKeepKeysNameTasksInSpawnOrder(t *testing.T) {
	res := Run(withReplay(Config{Seed: 5}, protocol.Options{RecordChoices: true}), func(s *Sim) {
		wg := s.NewWaitGroup("w")
		wg.Add(3)
		for range 2 {
			s.Go("worker", func() { defer wg.Done(); s.Yield(); s.Keep(KeepOperation) })
		}
		s.Go("other", func() { defer wg.Done(); s.Keep(KeepOperation); s.Keep(KeepOperation) })
		_ = wg.Wait(context.Background())
	})
	require.NoError(t, res.Err)
	var keys []protocol.KeepKey
	for _, site := range res.recorded.KeepSites {
		keys = append(keys, site.Key)
	}
	assert.ElementsMatch(t, []protocol.KeepKey{{Task: "worker", N: 0}, {Task: "worker#2", N: 0}, {Task: "other", N: 0}, {Task: "other", N: 1}}, keys)
}

// insideWorkload is a client whose operations each draw a parameter
// (the workload's), then, when kept, make a drawn number of statements
// (1 to 4) that each draw a latency and ask for a fault, as a database
// does inside the operation: marked with Inside, or not.
type insideOp struct {
	param     int
	latencies []int
	faults    []bool
}

func insideWorkload(marked bool, out *[]insideOp) func(s *Sim) {
	return func(s *Sim) {
		for range 8 {
			op := insideOp{param: s.Rand().IntN(1_000_000)}
			if !s.Keep(KeepOperation) {
				*out = append(*out, insideOp{param: -1})
				continue
			}
			var in protocol.Scope
			if marked {
				in = s.inside()
			}
			for range 1 + s.Rand().IntN(4) {
				op.latencies = append(op.latencies, s.Rand().IntN(1_000_000))
				op.faults = append(op.faults, s.Keep(KeepFault))
			}
			if marked {
				in.End()
			}
			*out = append(*out, op)
		}
	}
}

// Draws and faults made inside an operation (Inside) are keyed by the
// operation: dropping one operation leaves every other operation exactly
// as it was, parameters, latencies and fault answers alike. Unmarked, the
// dropped operation's statements no longer draw, and every later
// operation of the task takes over draws and answers that were another's.
func TestDrawsInsideAnOperationAreKeyedByIt(t *testing.T) {
	for _, marked := range []bool{true, false} {
		var rec []insideOp
		r := Run(withReplay(Config{Seed: 3}, protocol.Options{RecordChoices: true}), insideWorkload(marked, &rec))
		require.NoError(t, r.Err)
		require.Len(t, rec, 8)
		// Drop a fault of the last operation, so the lists are not all
		// true (a wrong lookup could then go unseen), and the 3rd operation.
		k := protocol.KeepsOfRun(&r.recorded)
		k = k.Without(KeepFault, len(k.Faults)-1)
		k = k.Without(KeepOperation, 2)
		var got []insideOp
		res := Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: r.recorded.Choices, Keeps: k}), insideWorkload(marked, &got))
		require.NoError(t, res.Err)
		want := append([]insideOp(nil), rec...)
		want[2] = insideOp{param: -1}
		last := &want[7]
		last.faults = append(append([]bool(nil), last.faults[:len(last.faults)-1]...), false)
		if marked {
			assert.Equal(t, want, got, "every other operation as it was")
			for _, key := range r.recorded.ChoiceKeys {
				if key.Task != "main" {
					assert.Equal(t, "main", key.Owner())
					assert.Contains(t, key.Task, opMark)
				}
			}
		} else {
			assert.NotEqual(t, want[3:], got[3:], "unmarked, the later operations move")
		}
		// The seed's own run is the same either way.
		var seed []insideOp
		require.NoError(t, Run(Config{Seed: 3}, insideWorkload(marked, &seed)).Err)
		assert.Equal(t, rec, seed)
	}
	var a, b []insideOp
	require.NoError(t, Run(Config{Seed: 3}, insideWorkload(true, &a)).Err)
	require.NoError(t, Run(Config{Seed: 3}, insideWorkload(false, &b)).Err)
	assert.Equal(t, a, b, "Inside changes no seed's run")
}

func TestInsideEndsOnce(t *testing.T) {
	res := Run(Config{Seed: 1}, func(s *Sim) {
		in := s.inside()
		in.End()
		in.End()
	})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "Inside().End() called more often than Inside")
}

// A task named with a NUL cannot pass for one of another task's
// operations in a key. Its key name holds none, and a second task of that
// name is told apart as "name#2" the same way.
func TestATaskNameWithANulIsKeyedWithout(t *testing.T) {
	res := Run(withReplay(Config{Seed: 1}, protocol.Options{RecordChoices: true}), func(s *Sim) {
		wg := s.NewWaitGroup("w")
		wg.Add(2)
		for range 2 {
			s.Go("a\x00op1", func() { defer wg.Done(); _ = s.Rand().IntN(10) })
		}
		_ = wg.Wait(context.Background())
	})
	require.NoError(t, res.Err)
	var names []string
	for _, k := range res.recorded.ChoiceKeys {
		names = append(names, k.Task)
		assert.Equal(t, k.Task, k.Owner(), "the key of a task's own draw is the task's")
	}
	assert.ElementsMatch(t, []string{"a\uFFFDop1", "a\uFFFDop1#2"}, names)
}

// A keyed replay records no Keep call it answers false, and its recording
// still replays the run: an unlisted call is answered false too. The
// edited run here asks more Keep calls than the run it edits (a loop runs
// until it has kept four), all of them dropped.
func TestAKeyedReplayRecordsOnlyWhatItKept(t *testing.T) {
	work := func(s *Sim) (kept int) {
		for i := 0; i < 1000 && kept < 4; i++ {
			_ = s.Rand().IntN(10)
			if s.Keep(KeepOperation) {
				kept++
			}
		}
		return kept
	}
	rec := Run(withReplay(Config{Seed: 3}, protocol.Options{RecordChoices: true}), func(s *Sim) { work(s) })
	require.NoError(t, rec.Err)
	require.Len(t, rec.recorded.KeepSites, 4, "a seed's run keeps everything and records every call")

	edited := protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, 1, 2)
	var got int
	res := Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: edited, RecordChoices: true}), func(s *Sim) { got = work(s) })
	require.NoError(t, res.Err)
	assert.Equal(t, 2, got, "past its list every call is answered false")
	assert.Equal(t, int64(998), res.recorded.Dropped.Operations)
	require.Len(t, res.recorded.KeepSites, 2, "only the kept calls are recorded")
	for i, k := range res.recorded.KeepSites {
		assert.True(t, k.Kept)
		assert.Equal(t, i, k.Index, "a site's Index is its place in protocol.KeepsOf's list")
	}
	assert.Equal(t, []protocol.KeepKey{{Task: "main", N: 0}, {Task: "main", N: 3}}, []protocol.KeepKey{res.recorded.KeepSites[0].Key, res.recorded.KeepSites[1].Key})

	// The recording replays the edited run exactly.
	var again int
	re := Run(withReplay(Config{Seed: 3}, protocol.Options{ReplayChoices: true, Choices: res.recorded.Choices, Keeps: protocol.KeepsOfRun(&res.recorded), RecordChoices: true}), func(s *Sim) { again = work(s) })
	require.NoError(t, re.Err)
	assert.Equal(t, got, again)
	assert.Equal(t, res.Hash, re.Hash)
	assert.Equal(t, res.recorded.Dropped, re.recorded.Dropped)
}

// KeepsLeft is true in a seed's run and a replay by ordinal, and false in
// a keyed replay once the task's list answers every later call false.
// Then a workload loop may end instead of running an idle tail.
func TestKeepsLeftEndsAnIdleTail(t *testing.T) {
	var left []bool
	var faultLeft bool
	work := func(s *Sim) {
		left = left[:0]
		for range 6 {
			left = append(left, s.KeepsLeft(KeepOperation))
			s.Keep(KeepOperation)
			_ = s.Rand().IntN(5)
		}
		faultLeft = s.KeepsLeft(KeepFault)
	}
	rec := Run(withReplay(Config{Seed: 8}, protocol.Options{RecordChoices: true}), work)
	require.NoError(t, rec.Err)
	assert.Equal(t, []bool{true, true, true, true, true, true}, left, "a seed's run always has some left")
	assert.True(t, faultLeft)

	keeps := protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, 3, 4, 5)
	require.NoError(t, Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps}), work).Err)
	assert.Equal(t, []bool{true, true, true, false, false, false}, left, "after the last kept call, none is left")
	assert.False(t, faultLeft, "the task's lists hold no fault: any it asked would be dropped")

	keeps = protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, 0, 1, 2, 3, 4, 5)
	require.NoError(t, Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps}), work).Err)
	assert.Equal(t, []bool{false, false, false, false, false, false}, left)

	// By ordinal (no keys), the answer is not guessed.
	ord := protocol.Keeps{Operations: []bool{true}}
	require.NoError(t, Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: ord}), work).Err)
	assert.Equal(t, []bool{true, true, true, true, true, true}, left)
}

// KeepsLeft answers the same however the replayed keys are filed. A
// recording leaves out the calls its run answered false. So a task whose
// only kept calls are its first and its 3,000th has keys the index files
// sparse in the recording, though dense in the run. The recording must
// still replay the run, its loop ending after the last kept call.
func TestKeepsLeftIsTheSameForSparseKeys(t *testing.T) {
	const calls, limit = 3000, 5000
	var asked int
	work := func(s *Sim) {
		asked = 0
		for asked < limit && s.KeepsLeft(KeepOperation) {
			s.Keep(KeepOperation)
			asked++
			_ = s.Rand().IntN(5)
		}
	}
	rec := Run(withReplay(Config{Seed: 8, MaxSteps: 1 << 20}, protocol.Options{RecordChoices: true}), func(s *Sim) {
		for range calls {
			s.Keep(KeepOperation)
			_ = s.Rand().IntN(5)
		}
	})
	require.NoError(t, rec.Err)
	drop := make([]int, 0, calls)
	for i := 1; i < calls-1; i++ {
		drop = append(drop, i)
	}
	run := Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, drop...), RecordChoices: true}), work)
	require.NoError(t, run.Err)
	require.Equal(t, calls, asked, "the run ends its loop after its last kept call")
	ix, err := protocol.KeepsOfRun(&run.recorded).IndexKeys(len(run.recorded.Choices))
	require.NoError(t, err)
	require.NotNil(t, ix[KeepOperation].Sparse, "the recording's operation keys are filed sparse (the case under test)")

	again := Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: run.recorded.Choices, Keeps: protocol.KeepsOfRun(&run.recorded)}), work)
	require.NoError(t, again.Err)
	assert.Equal(t, calls, asked, "the recording's replay ends its loop where the run did")
	assert.Equal(t, run.Hash, again.Hash)
}

// A recording keeps the call a task's KeepsLeft was promised but never
// reached. Take a worker whose lists keep its 10th call, but whose loop
// ends at 5 calls (its time is up): it sleeps between calls in the run. Its
// recording, which lists only the calls made, would answer KeepsLeft false
// at once, and its replay would not sleep at all.
func TestARecordingKeepsWhatKeepsLeftWasPromised(t *testing.T) {
	var asked int
	work := func(s *Sim) {
		asked = 0
		for asked < 5 && s.KeepsLeft(KeepOperation) {
			s.Keep(KeepOperation)
			asked++
			_ = s.Sleep(context.Background(), time.Duration(1+s.Rand().IntN(5))*time.Millisecond)
		}
	}
	rec := Run(withReplay(Config{Seed: 8}, protocol.Options{RecordChoices: true}), func(s *Sim) {
		for range 10 {
			s.Keep(KeepOperation)
			_ = s.Rand().IntN(5)
		}
	})
	require.NoError(t, rec.Err)
	keeps := protocol.KeepsOfRun(&rec.recorded).Without(KeepOperation, 0, 1, 2, 3, 4, 5, 6, 7, 8) // only the 10th call kept
	run := Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps, RecordChoices: true}), work)
	require.NoError(t, run.Err)
	require.Equal(t, 5, asked, "the loop ran until its time was up, KeepsLeft promising the 10th call")

	again := Run(withReplay(Config{Seed: 8}, protocol.Options{ReplayChoices: true, Choices: run.recorded.Choices, Keeps: protocol.KeepsOfRun(&run.recorded)}), work)
	require.NoError(t, again.Err)
	assert.Equal(t, 5, asked, "the recording's replay runs the loop as the run did")
	assert.Equal(t, run.Hash, again.Hash)
	assert.Equal(t, run.Elapsed, again.Elapsed)
}

package shrink_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// lostUpdate is a counter whose increment reads, yields and writes: two
// increments interleaved lose one. The workload is many clients with many
// operations and irrelevant injected faults; the bug needs two operations
// and one preemption.
func lostUpdate(s *sim.Sim) {
	r := s.Rand()
	counter, done := 0, 0
	clients := 3 + r.IntN(4)
	wg := s.NewWaitGroup("clients")
	wg.Add(clients)
	for c := range clients {
		s.Go(fmt.Sprintf("client%d", c), func() {
			defer wg.Done()
			for range 5 + s.Rand().IntN(10) {
				if s.Rand().IntN(3) == 0 && s.Keep(sim.KeepFault) {
					s.Injected("a fault nobody notices")
				}
				if !s.Keep(sim.KeepOperation) {
					continue
				}
				op := s.OpBegin("increment")
				v := counter
				s.Yield()
				counter = v + 1
				done++
				s.OpEnd(op, "ok")
			}
		})
	}
	_ = wg.Wait(context.Background())
	if counter != done {
		s.Failf("lost update: counter %d after %d increments", counter, done)
	}
}

func runner(body func(*sim.Sim)) shrink.Runner {
	return func(cfg sim.Config) (sim.Result, string) {
		res := sim.Run(cfg, body)
		if res.Err != nil {
			return res, res.Err.Error()
		}
		return res, ""
	}
}

func firstFailing(t *testing.T, body func(*sim.Sim)) (sim.Config, string) {
	t.Helper()
	for seed := uint64(1); seed < 100; seed++ {
		cfg := sim.Config{Seed: seed}
		if res := sim.Run(cfg, body); res.Err != nil {
			return cfg, res.Err.Error()
		}
	}
	t.Fatal("no seed of 100 fails")
	return sim.Config{}, ""
}

func TestShrinksALostUpdateToTwoOperationsAndOnePreemption(t *testing.T) {
	cfg, failure := firstFailing(t, lostUpdate)
	var lines []string
	out, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	t.Logf("%s\n%s", out.Removed(), strings.Join(lines, "\n"))
	assert.Greater(t, out.Before.Operations, int64(10))
	assert.Equal(t, int64(2), out.After.Operations, "a lost update needs two increments")
	assert.Zero(t, out.After.Faults, "no fault matters")
	assert.Equal(t, int64(1), out.After.Preemptions, "and one preemption between a read and its write")
	assert.Equal(t, "check: lost update: counter", out.Signature)
	assert.Contains(t, out.Failure, "lost update")
	assert.Empty(t, out.Stopped)
	assert.NotEmpty(t, lines, "progress is reported")

	// The shrunk run replays strictly, under any seed: the choices and the
	// decisions are the whole run.
	res := sim.Run(replaying(sim.Config{Seed: 12345, Strategy: sim.Replay(out.Decisions)}, out), lostUpdate)
	require.Error(t, res.Err)
	assert.Equal(t, out.Result.Hash, res.Hash)

	// Deterministic: the same failing run shrinks to the same result.
	again, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{})
	require.NoError(t, err)
	assert.Equal(t, out.Choices, again.Choices)
	assert.Equal(t, out.Keeps, again.Keeps)
	assert.Equal(t, out.Decisions, again.Decisions)
	assert.Equal(t, out.Attempts, again.Attempts)
}

// labelled is lostUpdate over many counters, each operation labelled with
// its counter: the failure names the counter that lost an update, and the
// shrinker keeps only that counter's operations in one re-run.
func labelled(s *sim.Sim) {
	counters := make([]int, 20)
	done := make([]int, 20)
	wg := s.NewWaitGroup("clients")
	wg.Add(4)
	for c := range 4 {
		s.Go(fmt.Sprintf("client%d", c), func() {
			defer wg.Done()
			for range 40 {
				k := s.Rand().IntN(len(counters))
				if !s.KeepFor(sim.KeepOperation, fmt.Sprintf("counter-%02d", k)) {
					continue
				}
				op := s.OpBegin("increment counter-%02d", k)
				v := counters[k]
				s.Yield()
				counters[k] = v + 1
				done[k]++
				s.OpEnd(op, "ok")
			}
		})
	}
	_ = wg.Wait(context.Background())
	for k := range counters {
		if counters[k] != done[k] {
			s.Failf("lost update on counter-%02d: %d after %d increments", k, counters[k], done[k])
		}
	}
}

func TestLabelsLetTheShrinkerKeepOnlyWhatTheFailureNames(t *testing.T) {
	cfg, failure := firstFailing(t, labelled)
	var lines []string
	out, err := shrink.Shrink(runner(labelled), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	t.Logf("%s\n%s", out.Removed(), strings.Join(lines, "\n"))
	assert.Contains(t, strings.Join(lines, "\n"), "the failure names", "the label pass ran and was accepted")
	assert.Equal(t, int64(2), out.After.Operations)
	assert.Equal(t, int64(160), out.Before.Operations)
}

// groupSnapshots caches each group's keys as one snapshot, loaded by a
// touch of the group's key k0 and never invalidated: a read of g/kN after
// a write to it is stale once the group was touched before the write. The
// failure names the stale key; the touch that loaded the snapshot is
// labelled with another key of the group, so only the coarse label pass
// (the parent key) keeps all three operations the failure needs.
func groupSnapshots(s *sim.Sim) {
	const groups, keys = 10, 4
	var version, snapshot [groups][keys]int
	var cached [groups]bool
	for range 300 {
		g, k, op := s.Rand().IntN(groups), 1+s.Rand().IntN(keys-1), s.Rand().IntN(3)
		if op == 0 {
			k = 0
		}
		if !s.KeepFor(sim.KeepOperation, fmt.Sprintf("store/g%d/k%d", g, k)) {
			continue
		}
		s.OpEnd(s.OpBegin("op %d on store/g%d/k%d", op, g, k), "ok")
		switch op {
		case 0:
			if !cached[g] {
				cached[g], snapshot[g] = true, version[g]
			}
		case 1:
			version[g][k]++
		case 2:
			if cached[g] && snapshot[g][k] != version[g][k] {
				s.Failf("stale read of store/g%d/k%d: version %d, the snapshot's %d", g, k, version[g][k], snapshot[g][k])
			}
		}
	}
}

func TestTheParentKeyKeepsWhatAnExactLabelMisses(t *testing.T) {
	cfg, failure := firstFailing(t, groupSnapshots)
	var lines []string
	out, err := shrink.Shrink(runner(groupSnapshots), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	log := strings.Join(lines, "\n")
	t.Logf("%s\n%s", out.Removed(), log)
	assert.NotContains(t, log, "kept the first", "no cut of the run's end was needed first")
	assert.Contains(t, log, "whose parent key the failure names", "the coarse label pass ran and was accepted")
	assert.Equal(t, int64(3), out.After.Operations, "a touch, a write and the stale read")
}

func TestAPassingRunIsRefused(t *testing.T) {
	_, err := shrink.Shrink(runner(func(*sim.Sim) {}), sim.Config{Seed: 1}, "check at step 3, +0s: boom", shrink.Options{})
	require.ErrorIs(t, err, shrink.ErrNotReplayed, "a failure the seed's re-run does not reproduce is a determinism bug")
	assert.Contains(t, err.Error(), "does not reproduce")
}

func TestAttemptsAreBounded(t *testing.T) {
	cfg, failure := firstFailing(t, lostUpdate)
	out, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{MaxAttempts: 6})
	require.NoError(t, err)
	assert.LessOrEqual(t, out.Attempts, 6+1, "the limit, plus the final replay")
	assert.Contains(t, out.Stopped, "attempt limit")
}

func TestHarnessFailuresAreNotShrunk(t *testing.T) {
	_, err := shrink.Shrink(runner(lostUpdate), sim.Config{Seed: 1}, "determinism: the same seed ran twice", shrink.Options{})
	require.Error(t, err)
}

func TestSignature(t *testing.T) {
	for in, want := range map[string]string{
		"check: OC-2: grant-staleness 1.2s breaks < 1s: read #5 non-member":            "check: OC-2: grant-staleness",
		"check: DR-6: at write 9217's acquisition: key GetItem.latency":                "check: DR-6: at write",
		"check: MS-8: 3 wrong answers":                                                 "check: MS-8:",
		`panic at step 812, +1.5s: task "client3" panicked: index out of range [4]`:    "panic: panicked: index out of range",
		"deadlock at step 90, +2s: every task is blocked and no timer is pending\n  x": "deadlock: every task is blocked and no timer is pending",
		"check at step 3, +0s: lost update: counter 5 after 6 increments":              "check: lost update: counter",
		// A proved leak and a possible one (the settle phase cut off) differ.
		"leak at step 9, +1s: 2 task(s) blocked forever after main returned (goroutine leak)":                              "leak: task(s) blocked forever after main returned (goroutine leak)",
		"leak at step 9, +2s: 10 task(s) still blocked 1s and 1000000 steps after main returned (possible goroutine leak)": "leak: task(s) still blocked",
	} {
		assert.Equal(t, want, shrink.Signature(in), in)
	}
}

func TestNames(t *testing.T) {
	failure := "check: OC-2: grant-staleness 1.2s breaks < 1s: read #5 non-member oc/k1/r3/o5 on pod 2; thread 1: conn 7 fired"
	for label, want := range map[string]bool{
		"oc/k1/r3/o5": true, "oc/k1/*/o5": true, "*/k1/r3/o5": true, "oc/k1/r3/*": true,
		"oc/k1/r3/o50": false, "oc/k1/r33/o5": false, "oc/k2/*/o5": false, "ms/k1/r3/o5": false,
		"conn 7": true, "conn 71": false, "onn 7": false, "": false, "o5": false,
	} {
		assert.Equal(t, want, shrink.Names(failure, label), label)
	}
}

// sequentialBug fails whatever the schedule: three tasks yield often (so a
// random walk preempts them many times) and the check fails once an
// operation ran. The shrinker must take every preemption away and stop
// there, not index past the last one.
func sequentialBug(s *sim.Sim) {
	wg := s.NewWaitGroup("tasks")
	wg.Add(3)
	ran := 0
	for i := range 3 {
		s.Go(fmt.Sprintf("task%d", i), func() {
			defer wg.Done()
			for range 20 {
				s.Yield()
			}
			if s.Keep(sim.KeepOperation) {
				op := s.OpBegin("write")
				ran++
				s.OpEnd(op, "ok")
			}
		})
	}
	_ = wg.Wait(context.Background())
	if ran > 0 {
		s.Failf("an operation ran")
	}
}

// It also loses every preemption in one schedule re-run: the cut tries no
// decision at all before halving (it used to take log2 of the decisions,
// with every preemption still to undo after).
func TestShrinkingASequentialBugEndsWithoutPreemptions(t *testing.T) {
	cfg, failure := firstFailing(t, sequentialBug)
	var lines []string
	out, err := shrink.Shrink(runner(sequentialBug), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	text := strings.Join(lines, "\n")
	assert.Greater(t, out.Before.Preemptions, int64(3), "the random walk preempted the tasks")
	assert.Equal(t, int64(0), out.After.Preemptions)
	assert.Equal(t, int64(1), out.After.Operations)
	assert.Equal(t, 1, strings.Count(text, "schedule:"), "one schedule re-run, accepted:\n%s", text)
	assert.Contains(t, text, "schedule: followed the first 0 decisions, then no preemption")
}

// droppedCounted is a lost update whose check also counts a dropped
// increment as lost, with the real failure's signature: a check judging the
// shrinker's edit instead of the code.
func droppedCounted(s *sim.Sim) {
	n, done, missed := 0, 0, 0
	wg := s.NewWaitGroup("clients")
	wg.Add(2)
	for c := range 2 {
		s.Go(fmt.Sprintf("client%d", c), func() {
			defer wg.Done()
			if !s.Keep(sim.KeepOperation) {
				missed++
				return
			}
			op := s.OpBegin("increment")
			v := n
			s.Yield()
			n = v + 1
			done++
			s.OpEnd(op, "ok")
		})
	}
	_ = wg.Wait(context.Background())
	if missed > 0 {
		s.Failf("lost update: %d after %d (%v)", n, done+missed, sim.ErrDropped)
	}
	if n != done {
		s.Failf("lost update: %d after %d", n, done)
	}
}

// A candidate whose failure is about an operation the edit dropped is not
// a counterexample, whatever its signature: the shrunk run keeps both
// increments (dropping one "fails" only through the check's mistake).
func TestAFailureAboutADroppedOperationIsRefused(t *testing.T) {
	cfg, failure := firstFailing(t, droppedCounted)
	out, err := shrink.Shrink(runner(droppedCounted), cfg, failure, shrink.Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.After.Operations)
	assert.NotContains(t, out.Failure, sim.ErrDropped.Error())
}

// A shrink that runs out of MaxAttempts above the goal runs its passes
// once more with MoreAttempts; one that meets the goal, or has no more to
// give, does not. The lost update needs 2 operations: with 6 attempts it
// ends far above the goal, and 6 + 300 more bring it there.
func TestMoreAttemptsWorkTowardTheGoal(t *testing.T) {
	cfg, failure := firstFailing(t, lostUpdate)
	short, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{MaxAttempts: 6})
	require.NoError(t, err)
	require.False(t, short.After.MeetsGoal(), "6 attempts leave %s", short.After)

	var lines []string
	more, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{MaxAttempts: 6, MoreAttempts: 300,
		Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	assert.True(t, more.After.MeetsGoal(), "%s", more.After)
	assert.Equal(t, int64(2), more.After.Operations)
	assert.Greater(t, more.Attempts, 6+1)
	assert.LessOrEqual(t, more.Attempts, 6+300+1, "both limits, plus the final replay")
	assert.Contains(t, strings.Join(lines, "\n"), "more: ", "the extra round says so")
	if more.Stopped != "" {
		assert.Contains(t, more.Stopped, "6 + 300 more")
	}

	// A shrink that meets the goal within MaxAttempts takes none more.
	enough, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{})
	require.NoError(t, err)
	plenty, err := shrink.Shrink(runner(lostUpdate), cfg, failure, shrink.Options{MoreAttempts: 300})
	require.NoError(t, err)
	assert.Equal(t, enough.Attempts, plenty.Attempts)
	assert.Equal(t, enough.Choices, plenty.Choices)
}

// bigQueue fails only once its queue is full: a seed's queue holds 20 to
// 40 entries, the smallest draw (1, which a seed's run draws once in 2^63)
// gives 2. The probe of the smallest draws makes the run small before the
// operations pass starts dropping.
func bigQueue(s *sim.Sim) {
	size := 20 + s.Rand().IntN(21)
	if s.Rand().Uint64() <= 1 {
		size = 2
	}
	n := 0
	for range 60 {
		if !s.Keep(sim.KeepOperation) {
			continue
		}
		op := s.OpBegin("push")
		n++
		s.OpEnd(op, "ok")
		if n > size {
			s.Failf("queue of %d overflowed", size)
			return
		}
	}
}

func TestTheDrawProbeShrinksTheWorldFirst(t *testing.T) {
	cfg, failure := firstFailing(t, bigQueue)
	var lines []string
	out, err := shrink.Shrink(runner(bigQueue), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	require.GreaterOrEqual(t, out.Before.Operations, int64(21))
	assert.Equal(t, int64(3), out.After.Operations, "a queue of 2 overflows at its third push")
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Contains(t, lines[1], "smallest draws", "the first accepted step is the probe: %q", lines[1])
}

// Once a run has at most one operation, no fault and no preemption, the
// shrink ends: the passes left could only make its draws smaller.
func TestABareRunEndsTheShrink(t *testing.T) {
	cfg, failure := firstFailing(t, sequentialBug)
	var lines []string
	out, err := shrink.Shrink(runner(sequentialBug), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	require.Equal(t, int64(1), out.After.Operations)
	bare := -1
	for i, l := range lines {
		if strings.Contains(l, "as small as a reader counts") {
			bare = i
		}
	}
	require.NotEqual(t, -1, bare, "the shrink says why it ended:\n%s", strings.Join(lines, "\n"))
	assert.Len(t, lines, bare+2, "only the final line follows: %q", lines[bare+1:])
	for _, l := range lines {
		assert.NotContains(t, l, "smallest draws", "no draw was shrunk after the run was bare")
	}
}

// faultyWorld fails when its one fault site is kept, whatever the schedule
// and the draws; it draws a hundred values and runs no operation.
func faultyWorld(s *sim.Sim) {
	sum := 0
	for range 100 {
		sum += s.Rand().IntN(1000)
	}
	if s.Keep(sim.KeepFault) {
		s.Failf("a fault was injected (draws summed to %d)", sum)
	}
}

// A run with at most one operation skips the passes that work toward fewer
// operations (the draws, the operations again): with a fault left it is not
// bare, but no draw could make an operation droppable.
func TestARunWithoutOperationsSkipsTheDrawsPasses(t *testing.T) {
	cfg, failure := firstFailing(t, faultyWorld)
	var lines []string
	out, err := shrink.Shrink(runner(faultyWorld), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	assert.Equal(t, int64(0), out.After.Operations)
	assert.Equal(t, int64(1), out.After.Faults, "the fault is the failure")
	text := strings.Join(lines, "\n")
	assert.Contains(t, text, "skip: the draws pass")
	assert.Contains(t, text, "skip: the operations again pass")
	assert.NotContains(t, text, "smallest draws", "no draw was shrunk")
	assert.Less(t, out.Attempts, 10, "the fault pass and the final replay: %s", text)
}

// fewYields is faultyWorld with two tasks that yield three times each: a
// random walk preempts them once or twice, and the failure needs none of it.
func fewYields(s *sim.Sim) {
	wg := s.NewWaitGroup("tasks")
	wg.Add(2)
	for i := range 2 {
		s.Go(fmt.Sprintf("task%d", i), func() {
			defer wg.Done()
			for range 3 {
				s.Yield()
			}
		})
	}
	_ = wg.Wait(context.Background())
	if s.Keep(sim.KeepFault) {
		s.Failf("a fault was injected")
	}
}

// With two preemptions or fewer the schedule pass undoes each, without
// first cutting the decision list by halves (log2 of the decisions in
// re-runs: a dozen for MS-8's heavy runs of 3,049 steps, to undo one).
func TestAFewPreemptionsAreUndoneWithoutTheCut(t *testing.T) {
	for _, want := range []int{1, 2} {
		var cfg sim.Config
		var failure string
		for seed := uint64(1); seed < 500 && failure == ""; seed++ {
			c := sim.Config{Seed: seed}
			if r := sim.Run(c, fewYields); r.Err != nil && r.Preemptions == int64(want) {
				cfg, failure = c, r.Err.Error()
			}
		}
		require.NotEmpty(t, failure, "no seed preempted the fixture %d times", want)
		var lines []string
		out, err := shrink.Shrink(runner(fewYields), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
		require.NoError(t, err)
		text := strings.Join(lines, "\n")
		require.Equal(t, int64(want), out.Before.Preemptions, text)
		assert.Equal(t, int64(0), out.After.Preemptions, text)
		assert.Contains(t, text, "schedule: no preemption at", "the preemptions were undone")
		assert.NotContains(t, text, "followed the first", "no cut of the decision list")
		// The faults pass (3), one undo per preemption, one more try of
		// the second schedule pass, the final replay: 6 and 7 (the cut
		// made them 14 and 15).
		assert.LessOrEqual(t, out.Attempts, 5+want, "%d preemptions: %s", want, text)
	}
}

// setupBug fails whatever its operations do: its setup is wrong, as
// tw3-scan-all-buckets' pass visits every bucket before any connection has
// seen activity. It draws a thousand values and runs up to 500 operations.
func setupBug(s *sim.Sim) {
	sum := 0
	for range 1000 {
		sum += s.Rand().IntN(1000)
	}
	for range 500 {
		if s.Keep(sim.KeepOperation) {
			op := s.OpBegin("touch")
			s.OpEnd(op, "ok")
		}
	}
	s.Failf("the setup was wrong (draws summed to %d)", sum)
}

// A failure that needs no operation is shrunk by its first candidate, the
// run without any: no draw probe, no halving. Each re-run of
// tw3-scan-all-buckets (100,000 connections) takes a second; the probe of
// the smallest draws and the halving down to no operation took 12 of its
// 15 re-runs.
func TestTheRunWithoutOperationsIsTriedFirst(t *testing.T) {
	cfg, failure := firstFailing(t, setupBug)
	runs := 0
	run := runner(setupBug)
	counted := func(cfg sim.Config) (sim.Result, string) { runs++; return run(cfg) }
	var lines []string
	out, err := shrink.Shrink(counted, cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	require.Equal(t, int64(500), out.Before.Operations)
	assert.Equal(t, int64(0), out.After.Operations)
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Contains(t, lines[1], "dropped every operation", "the first accepted step: %q", lines[1])
	text := strings.Join(lines, "\n")
	assert.NotContains(t, text, "smallest draws", "no draw was shrunk")
	assert.Equal(t, 3, runs, "the failing run, the run without operations and the final replay:\n%s", text)
}

// replaying is cfg replaying the shrunk run out's choices.
func replaying(cfg sim.Config, out shrink.Outcome) sim.Config {
	o := protocol.ConfigOf(&cfg)
	o.ReplayChoices, o.Choices, o.Keeps = true, out.Choices, out.Keeps
	return cfg
}

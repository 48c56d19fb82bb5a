package simtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// TestFixtureShrink is a workload whose bug needs two of its many
// operations and one preemption, with faults that play no part: run by
// TestHarnessShrinks in a child process.
func TestFixtureShrink(t *testing.T) {
	fixture(t)
	Run(t, Options{Seeds: 50}, func(s *sim.Sim) error {
		mu := s.NewMutex("counter")
		counter, done := 0, 0
		clients := 3 + s.Rand().IntN(3)
		wg := s.NewWaitGroup("clients")
		wg.Add(clients)
		for c := range clients {
			s.Go(fmt.Sprintf("client%d", c), func() {
				defer wg.Done()
				for range 4 + s.Rand().IntN(8) {
					if s.Rand().IntN(4) == 0 && s.Keep(sim.KeepFault) {
						s.Injected("a slow disk nobody notices")
					}
					if !s.Keep(sim.KeepOperation) {
						continue
					}
					op := s.OpBegin("increment")
					mu.Lock()
					v := counter
					mu.Unlock()
					s.Yield()
					mu.Lock()
					counter = v + 1
					done++
					mu.Unlock()
					s.OpEnd(op, "ok (%d)", v+1)
				}
			})
		}
		_ = wg.Wait(context.Background())
		if counter != done {
			return fmt.Errorf("lost update: counter %d after %d increments", counter, done)
		}
		return nil
	})
}

func TestHarnessShrinksAFailingSeed(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixtureShrink", "shrink", nil, "-sim.out="+dir+"/art", "-sim.record=false", "-sim.shrink")
	require.Error(t, err, "the seed still fails")
	for _, want := range []string{
		"windtunnel failure", "shrinking seed", "shrink: start:",
		"shrunk     operations", " -> 2, faults ", " -> 0, preemptions ",
		`still fails with "check: lost update: counter"`,
		"interleaving of the shrunk run:", "scenario: 2 operations on 2 tasks", "increment -> ok (1)",
		"replay the shrunk run", "shrunk/replay.txt",
	} {
		assert.Contains(t, out, want)
	}
	m := regexp.MustCompile(`-sim\.replay=(\S+shrunk/replay\.txt)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	replay := m[1]

	// The shrunk file replays the failure exactly, and shrinking it again
	// changes nothing.
	again, err := childRun(t, dir, "TestFixtureShrink", "shrink", nil, "-sim.out="+dir+"/art2", "-sim.replay="+replay)
	require.Error(t, err)
	assert.Contains(t, again, "failure    check: lost update: counter 1 after 2 increments")
	assert.Contains(t, again, "choices    ", "the replayed run names its choices")
	assert.Contains(t, again, "a shrunk run")

	sums, _ := filepath.Glob(filepath.Join(dir, "art", "*", ShrinkFile))
	require.Len(t, sums, 1)
	sum, err := ReadShrinkSummary(sums[0])
	require.NoError(t, err)
	assert.Equal(t, int64(2), sum.After.Operations)
	assert.LessOrEqual(t, sum.After.Preemptions, int64(3), "at most 3 preemptions (the bug needs 1)")
	assert.Positive(t, sum.After.Preemptions)
	assert.Zero(t, sum.After.Faults)
	assert.Greater(t, sum.Before.Operations, sum.After.Operations)
	assert.FileExists(t, sum.Table)
	require.NotEmpty(t, sum.Timeline, "the shrunk run gets a timeline page")
	page, err := os.ReadFile(sum.Timeline)
	require.NoError(t, err)
	assert.Contains(t, string(page), "client0")
	assert.Contains(t, string(page), "lost update")
	assert.FileExists(t, sum.Replay)
	table, err := os.ReadFile(sum.Table)
	require.NoError(t, err)
	assert.Contains(t, string(table), "✗ failed: check: lost update: counter 1 after 2 increments")
}

func TestReplayFileKeepsChoices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.txt")
	ops := make([]bool, 70)
	ops[0], ops[69] = true, true
	rf := replayFile{Test: "T", Seed: 1, Strategy: "replay(shrunk)", Commit: "x", Choices: []uint64{0, 1, 0xdeadbeef},
		Keeps: protocol.Keeps{Operations: ops, Faults: []bool{}}, Decisions: []int32{0, 1}}
	require.NoError(t, writeReplay(path, rf))
	back, err := readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, rf.Choices, back.Choices)
	assert.Equal(t, rf.Keeps.Operations, back.Keeps.Operations)
	assert.Empty(t, back.Keeps.Faults)
	assert.Equal(t, rf.Decisions, back.Decisions)

	// A keyed replay (draws and answers by task, protocol.KeepsOfRun) round
	// trips with its keys: the task table holds names with spaces and
	// quotes, the ordinals follow from the order.
	rf.Keeps.ChoiceKeys = []protocol.KeepKey{{Task: "client 1", N: 0}, {Task: `q"t`, N: 0}, {Task: "client 1", N: 1}}
	rf.Keeps.OperationKeys = make([]protocol.KeepKey, 72) // two more than answers: past the list, answered false
	for i := range rf.Keeps.OperationKeys {
		rf.Keeps.OperationKeys[i] = protocol.KeepKey{Task: []string{"client 1", "main"}[i%2], N: i / 2}
	}
	rf.Keeps.FaultKeys = []protocol.KeepKey{}
	require.NoError(t, writeReplay(path, rf))
	back, err = readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, rf.Choices, back.Choices)
	assert.Equal(t, rf.Keeps.Operations, back.Keeps.Operations)
	assert.Equal(t, rf.Keeps.ChoiceKeys, back.Keeps.ChoiceKeys)
	assert.Equal(t, rf.Keeps.OperationKeys[:70], back.Keeps.OperationKeys)
	assert.Empty(t, back.Keeps.FaultKeys)
	// A shrunk run's lists skip the calls it answered false (sim records
	// none in a keyed replay): the file fills each gap with a false
	// answer, which replays the same, since an unlisted call is false.
	gappy := rf
	gappy.Keeps.Operations = []bool{true, true, false, true}
	gappy.Keeps.OperationKeys = []protocol.KeepKey{{Task: "main", N: 0}, {Task: "main", N: 3}, {Task: "c", N: 1}, {Task: "c", N: 2}, {Task: "main", N: 9}}
	require.NoError(t, writeReplay(path, gappy))
	back, err = readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, true, false, false, true}, back.Keeps.Operations)
	assert.Equal(t, []protocol.KeepKey{{Task: "main", N: 0}, {Task: "main", N: 1}, {Task: "main", N: 2}, {Task: "main", N: 3}, {Task: "c", N: 0}, {Task: "c", N: 1}, {Task: "c", N: 2}}, back.Keeps.OperationKeys)
	assert.Equal(t, []bool{true, true, false, true}, gappy.Keeps.Operations, "the caller's lists are not changed")
	// Keys out of their task's call order cannot be written (the file
	// holds no ordinals).
	rf.Keeps.ChoiceKeys = []protocol.KeepKey{{Task: "a", N: 1}, {Task: "a", N: 0}, {Task: "b", N: 0}}
	require.ErrorContains(t, writeReplay(path, rf), `the choice answers of task "a" are not in its call order`)
	rf.Keeps.ChoiceKeys, rf.Keeps.OperationKeys, rf.Keeps.FaultKeys = nil, nil, nil

	// "choices seed" (a seed's own run) reads as nil choices; files of an
	// older version are refused, naming the commit to replay them at.
	rf.Choices = nil
	require.NoError(t, writeReplay(path, rf))
	back, err = readReplay(path)
	require.NoError(t, err)
	assert.Nil(t, back.Choices)
	for _, v := range []string{"v2", "v3", "v4"} {
		_, err := parseReplay([]byte("windtunnel replay " + v + "\ntest T\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit 1a2b3c\ndecisions 2\n0 1\n"))
		assert.ErrorContains(t, err, "an older replay file ("+v+"), from commit 1a2b3c: replay it there", v)
	}

	v5 := replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\n"
	for name, c := range map[string]struct{ text, want string }{
		"few choices": {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices 3\nkeeps 0 0\nkeeptasks 0\ndecisions 1\n0x1\n", "announces 3 choices"},
		"not hex":     {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices 1\nkeeps 0 0\nkeeptasks 0\ndecisions 1\n12 0\n", "not a hex value"},
		"bad count":   {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices many\nkeeps 0 0\nkeeptasks 0\ndecisions 1\n0\n", `neither "seed" nor a count`},
		"few keeps":   {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices 1\nkeeps 3 1\nkeeptasks 0\ndecisions 1\n0x1\n01\n0\n", "announces 4 Keep answers, the file holds 3"},
		"not bits":    {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices 1\nkeeps 2 0\nkeeptasks 0\ndecisions 1\n0x1\n0a\n0\n", "not a run of 0 and 1"},
		"keeps mixed": {replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps 1 0\nkeeptasks 0\ndecisions 1\n0\n", "both come from the seed or neither"},
		// The task table of a keyed replay.
		"tasks mixed":    {v5 + "choices seed\nkeeps seed\nkeeptasks 1\ntask \"a\"\ndecisions 1\n0\n", "both come from the seed or neither"},
		"tasks count":    {v5 + "choices 1\nkeeps 0 0\nkeeptasks lots\ndecisions 1\n0x1\n0\n", `neither "seed" nor a task count`},
		"tasks short":    {v5 + "choices 1\nkeeps 0 0\nkeeptasks 2\ntask \"a\"\ndecisions 1\n0x1\n0\n0\n", "announces 2 tasks, line 2 is \"decisions 1\""},
		"task unquoted":  {v5 + "choices 1\nkeeps 0 0\nkeeptasks 1\ntask a\ndecisions 1\n0x1\n0\n0\n", "not a quoted name"},
		"task twice":     {v5 + "choices 2\nkeeps 0 0\nkeeptasks 2\ntask \"\"\ntask \"\"\ndecisions 1\n0x1 0x2\n\n\n0 1\n0\n", `task line 2: "" is listed twice`},
		"task index":     {v5 + "choices 1\nkeeps 1 0\nkeeptasks 1\ntask \"a\"\ndecisions 1\n0x1\n1\n0 3\n0\n", "keyed entry 2's task is \"3\", not one of the 1 tasks"},
		"task truncated": {v5 + "choices 2\nkeeps 1 0\nkeeptasks 1\ntask \"a\"\ndecisions 1\n0x1 0x2\n1\n0\n", "announces 3 keyed draws and Keep answers, the file holds 1 task indices"},
	} {
		_, err := parseReplay([]byte(c.text))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), c.want, name)
		}
	}
}

// A seed found by POS, SURW or GoOrder shrinks as one found by random walk does,
// and the shrunk file replays it.
func TestHarnessShrinksUnderPOSSURWAndGoOrder(t *testing.T) {
	for _, name := range []string{"pos", "surw", "goorder"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out, err := childRun(t, dir, "TestFixtureShrink", "shrink", nil, "-sim.strategy="+name, "-sim.out="+dir+"/art", "-sim.record=false", "-sim.shrink")
			require.Error(t, err, "the seed still fails")
			assert.Contains(t, out, "strategy   "+name+"\n")
			assert.Contains(t, out, `still fails with "check: lost update: counter`)
			m := regexp.MustCompile(`-sim\.replay=(\S+shrunk/replay\.txt)`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			again, err := childRun(t, dir, "TestFixtureShrink", "shrink", nil, "-sim.out="+dir+"/art2", "-sim.replay="+m[1])
			require.Error(t, err)
			assert.Contains(t, again, "failure    check: lost update: counter")
			assert.NotContains(t, again, "diverged")
		})
	}
}

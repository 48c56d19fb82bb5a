package simtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
)

// A replay file readReplay would refuse is never written, so no report
// prints a command that cannot run; one within the limit reads back whole.
func TestReplayFileOverTheLimitIsNotWritten(t *testing.T) {
	dir := t.TempDir()
	rf := replayFile{Test: "TestX", Package: "./x", Seed: 1, Strategy: "random", MaxSteps: 100, Commit: "c", Decisions: make([]int32, 1000)}
	for i := range rf.Decisions {
		rf.Decisions[i] = int32(i % 7) // no runs to fold
	}
	path := filepath.Join(dir, "replay.txt")
	err := writeReplayUpTo(path, rf, 1000)
	require.ErrorContains(t, err, "no replay file: the run's 1000 decisions would make one of")
	assert.NoFileExists(t, path)
	require.NoError(t, writeReplayUpTo(path, rf, 1<<20))
	back, err := readReplay(path)
	require.NoError(t, err)
	assert.Len(t, back.Decisions, 1000)
}

// A long run of one task is written as task*steps and read back as the
// steps it stands for; runs of two stay as they are.
func TestReplayFileFoldsRunsOfOneTask(t *testing.T) {
	dir := t.TempDir()
	var ds []int32
	ds = append(ds, 0, 1, 1)
	for range 40 {
		ds = append(ds, 3)
	}
	ds = append(ds, 2)
	for range 1_000_000 {
		ds = append(ds, 4)
	}
	rf := replayFile{Test: "TestX", Package: "./x", Seed: 1, Strategy: "random", MaxSteps: 100, Commit: "c", Decisions: ds}
	path := filepath.Join(dir, "replay.txt")
	require.NoError(t, writeReplay(path, rf))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(b), "\ndecisions 1000044\n0 1 1 3*40 2 4*1000000\n"), string(b))
	back, err := readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, ds, back.Decisions)
}

func TestReplayFileRefusesBadRuns(t *testing.T) {
	head := replayMagic + "\ntest T\npackage -\nseed 0x1\nstrategy random\nsteptime 0s\nmaxsteps 0\ncommit x\nmutant none\nchoices seed\nkeeps seed\nkeeptasks seed\n"
	for name, c := range map[string]struct{ body, want string }{ //windtunnel:unordered each case stands alone
		"run of one": {"decisions 2\n0*1 1\n", "not a task id or a run"},
		"no count":   {"decisions 2\n0*x\n", "not a task id or a run"},
		"bad task":   {"decisions 2\nz*2\n", "not a task id or c"},
		"too long":   {"decisions 3\n0*2 1*2\n", "more than the 3 decisions"},
		"too many":   {"decisions 600000000\n0*600000000\n", "600000000 decisions is out of range"},
		"v5 is read": {"decisions 2\n0 1\n", ""},
	} {
		text := head + c.body
		if name == "v5 is read" {
			text = strings.Replace(text, replayMagic, replayMagicV5, 1)
		}
		rf, err := parseReplay([]byte(text))
		if c.want == "" {
			require.NoError(t, err, name)
			assert.Equal(t, []int32{0, 1}, rf.Decisions, name)
			continue
		}
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}

// A clock jump (sim.ClockDecision) is written `c`, folded like a task's run,
// and read back.
func TestReplayFileWritesClockJumps(t *testing.T) {
	c := sim.ClockDecision
	ds := []int32{0, c, c, c, 1, c, 2}
	rf := replayFile{Test: "TestX", Package: "./x", Seed: 1, Strategy: "goorder", MaxSteps: 100, Commit: "c", Decisions: ds}
	path := filepath.Join(t.TempDir(), "replay.txt")
	require.NoError(t, writeReplay(path, rf))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(b), "\ndecisions 7\n0 c*3 1 c 2\n"), string(b))
	back, err := readReplay(path)
	require.NoError(t, err)
	assert.Equal(t, ds, back.Decisions)
}

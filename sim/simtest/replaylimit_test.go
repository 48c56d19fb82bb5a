package simtest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replay file readReplay would refuse is never written, so no report
// prints a command that cannot run; one within the limit reads back whole.
func TestReplayFileOverTheLimitIsNotWritten(t *testing.T) {
	dir := t.TempDir()
	rf := replayFile{Test: "TestX", Package: "./x", Seed: 1, Strategy: "random", MaxSteps: 100, Commit: "c", Decisions: make([]int32, 1000)}
	path := filepath.Join(dir, "replay.txt")
	err := writeReplayUpTo(path, rf, 1000)
	require.ErrorContains(t, err, "no replay file: the run's 1000 decisions would make one of")
	assert.NoFileExists(t, path)
	require.NoError(t, writeReplayUpTo(path, rf, 1<<20))
	back, err := readReplay(path)
	require.NoError(t, err)
	assert.Len(t, back.Decisions, 1000)
}

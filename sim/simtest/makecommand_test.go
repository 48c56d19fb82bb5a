package simtest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMakeCommandSurvivesTheShell pastes a make command whose values hold
// spaces, quotes and shell syntax into sh, which must hand make exactly the
// values given: a catalogue path like "my mutants/it's.txt" once reached
// make split in two.
func TestMakeCommandSurvivesTheShell(t *testing.T) {
	cmd := simtest.MakeCommand("replay", "mine-1", "/tmp/my mutants/it's.txt", "./scenarios/oc", "TestOC2_X/sub $HOME", "0x1f", "-sim.strategy=pct -sim.pct.depth=3")
	require.True(t, strings.HasPrefix(cmd, "make replay "), cmd)
	// sh splits the words after make; printf shows each on its own line.
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+strings.TrimPrefix(cmd, "make replay ")).Output()
	require.NoError(t, err, cmd)
	require.Equal(t, []string{
		"MUTANT=mine-1",
		"MUTANTS=/tmp/my mutants/it's.txt",
		"PKG=./scenarios/oc",
		"TEST=TestOC2_X/sub $HOME",
		"SEED=0x1f",
		"ARGS=-sim.strategy=pct -sim.pct.depth=3",
	}, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"))
	require.NotContains(t, simtest.MakeCommand("shrink", "m", "", "./p", "TestX", "", ""), "MUTANTS=", "no catalogue, no MUTANTS")
}

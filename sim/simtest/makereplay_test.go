package simtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeReplayReproducesThePrintedFailure: the README's `make replay
// FILE=…` reproduces a failure found under each setting that shapes a run
// (same failure, same trace hash, no divergence) from the file alone, and
// `make replay TEST=…` with a name that matches no test is an error, not
// "ok, no tests to run".
func TestMakeReplayReproducesThePrintedFailure(t *testing.T) {
	if underRace {
		t.Skip("runs make and go test in subprocesses, which the race detector does not see (it runs in full in make unit)")
	}
	if testing.Short() {
		t.Skip("builds this package again through make and go test")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Skipf("no Makefile at the module root %s", root)
	}
	// makeReplay runs make replay with an absolute OUT, which is where the
	// trace must land (not under the checkout).
	makeReplay := func(t *testing.T, args ...string) (string, error) {
		out := t.TempDir()
		cmd := exec.Command("make", append([]string{"-s", "-C", root, "replay", "PKG=./sim/simtest", "OUT=" + out}, args...)...)
		cmd.Env = append(os.Environ(), "WINDTUNNEL_FIXTURE=fail")
		b, err := cmd.CombinedOutput()
		if traces, _ := filepath.Glob(filepath.Join(out, "replay", "*.trace")); len(traces) == 0 && strings.Contains(string(b), "trace hash") {
			t.Errorf("make replay OUT=%s wrote no trace under OUT", out)
		}
		return string(b), err
	}
	for _, flags := range [][]string{
		{"-sim.steptime=1us"},
		{"-sim.strategy=pct", "-sim.pct.depth=2"},
		{"-sim.maxsteps=3"},
	} {
		t.Run(strings.Join(flags, "_"), func(t *testing.T) {
			f := printedFailure(t, t.TempDir(), flags...)
			again, err := makeReplay(t, "FILE="+f.replay)
			require.Error(t, err, "the replayed run fails as the original did:\n%s", again)
			f.reproducedBy(t, again)
		})
	}
	t.Run("no such test", func(t *testing.T) {
		out, err := makeReplay(t, "TEST=TestNoSuchTest", "SEED=0x1")
		require.Error(t, err, out)
		assert.Contains(t, out, "replay: no test in ./sim/simtest matches")
	})
}

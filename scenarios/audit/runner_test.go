package audit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// TestMutantRunsStopAtTheirFirstFailure: a mutant is caught by its first
// failure, and both ways of running one (its own overlay, the family's
// schema binary) start no test or subtest after it: the fixture's "large"
// configuration and its later test leave no mark. Without -failfast the
// audit's mutant phase spent most of its time in the 400,000-points-per-key
// configurations of DR-2 and DR-10 after their 4,000-point ones had caught
// the mutant.
func TestMutantRunsStopAtTheirFirstFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	m := mutants.Mutant{ID: "fixture-broken", Claims: []string{"X-1"}, What: "the fixture is broken",
		File: "scenarios/audit/testdata/failfast/fixture.go", Old: "Broken = false", New: "Broken = true",
		Tests: "^Test", Pkg: "./scenarios/audit/testdata/failfast", Kind: mutants.KindCatalogue}
	r := Runner{Root: root, Out: t.TempDir(), Timeout: 5 * time.Minute}

	bin := filepath.Join(t.TempDir(), "failfast.test")
	build := exec.Command("go", "test", "-c", "-o", bin, m.Pkg)
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, way := range []struct {
		name string
		run  func() MutantResult
	}{
		{"overlay", func() MutantResult { return r.RunMutant(context.Background(), m, 1) }},
		{"schema", func() MutantResult { return r.runSchemaMutant(context.Background(), m, 1, bin) }},
	} {
		t.Run(way.name, func(t *testing.T) {
			marks := t.TempDir()
			t.Setenv("FAILFAST_MARKS", marks)
			res := way.run()
			require.Empty(t, res.Error)
			assert.True(t, res.Caught, "the small configuration catches it")
			assert.FileExists(t, filepath.Join(marks, "small"))
			assert.NoFileExists(t, filepath.Join(marks, "large"), "no subtest starts after the first failure")
			assert.NoFileExists(t, filepath.Join(marks, "later"), "no test starts after the first failure")
		})
	}

	// And the fixture is a fair one: unmutated, everything runs.
	marks := t.TempDir()
	cmd := exec.Command(bin, "-test.failfast")
	cmd.Dir = filepath.Join(root, m.Pkg)
	cmd.Env = append(os.Environ(), "FAILFAST_MARKS="+marks)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, name := range []string{"small", "large", "later"} {
		assert.FileExists(t, filepath.Join(marks, name))
	}
}

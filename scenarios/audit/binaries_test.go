package audit

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheClaimPhaseRunsPrebuiltBinaries builds the fixture packages' test
// binaries once (Runner.Build, what audit build runs before a sweep's
// array) and runs the claim phase from them: the same records as a claim
// phase that builds its own, and nothing built into its output directory.
// A directory that lacks a package's binary is an error that says how to
// build them.
func TestTheClaimPhaseRunsPrebuiltBinaries(t *testing.T) {
	t.Parallel() // its own processes and directories: beside the others, not after them
	if testing.Short() {
		t.Skip("runs go test -c")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const slow, fast = "./scenarios/audit/testdata/order/slow", "./scenarios/audit/testdata/order/fast"
	bin := t.TempDir()
	b := Runner{Root: root, Bin: bin, Pkgs: []string{slow, fast}, Log: io.Discard, Timeout: 5 * time.Minute}
	require.NoError(t, b.Build(context.Background(), nil, 2))

	ids := func(r Runner) []string {
		recs, failed, err := r.RunClaims(context.Background(), "^Test", 0)
		require.NoError(t, err)
		assert.Empty(t, failed)
		var out []string
		for _, rec := range recs {
			out = append(out, rec.ID)
		}
		return out
	}
	env := map[string]string{"WINDTUNNEL_ORDER_LOG": filepath.Join(t.TempDir(), "order.log")}
	prebuilt := Runner{Root: root, Out: t.TempDir(), Bin: bin, Pkgs: []string{slow, fast}, Log: io.Discard, Timeout: 5 * time.Minute, Env: env,
		Timed: map[string][]string{fast: {"TestFastTimed"}}}
	own := prebuilt
	own.Bin, own.Out = "", t.TempDir()
	assert.Equal(t, []string{"FX-1", "FX-2", "FX-3", "FX-4"}, ids(prebuilt))
	assert.Equal(t, ids(own), ids(prebuilt), "the prebuilt binaries and the claim phase's own give the same records")
	_, err = os.Stat(filepath.Join(prebuilt.Out, "bin"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a claim phase with prebuilt binaries builds none")
	_, err = os.Stat(testBinary(own.Out+"/bin", fast))
	assert.NoError(t, err, "a claim phase without them builds its own into its output directory")

	missing := prebuilt
	missing.Pkgs = append(missing.Pkgs, "./scenarios/audit/testdata/broken")
	_, _, err = missing.RunClaims(context.Background(), "^Test", 0)
	assert.ErrorContains(t, err, "audit build -bin "+bin)

	// Binaries of another commit are refused, not run.
	require.NoError(t, os.WriteFile(filepath.Join(bin, stampName), []byte(`{"commit":"0123456789ab"}`), 0o644))
	_, _, err = prebuilt.RunClaims(context.Background(), "^Test", 0)
	assert.ErrorContains(t, err, "holds the test binaries of commit 0123456789ab, this checkout is "+Commit(root))
	require.NoError(t, os.Remove(filepath.Join(bin, stampName)))
	_, _, err = prebuilt.RunClaims(context.Background(), "^Test", 0)
	assert.ErrorContains(t, err, "was not written by audit build")
}

// TestAPackageThatDoesNotBuildIsReportedAsGoTestWould: the claim phase
// builds its binaries itself, and a package whose test binary does not
// build is a failed package ("does not build"), with go's errors in the
// output, while the other packages' checks run.
func TestAPackageThatDoesNotBuildIsReportedAsGoTestWould(t *testing.T) {
	t.Parallel() // its own processes and directories: beside the others, not after them
	if testing.Short() {
		t.Skip("runs go test -c")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const broken, fast = "./scenarios/audit/testdata/broken", "./scenarios/audit/testdata/order/fast"
	r := Runner{Root: root, Out: t.TempDir(), Pkgs: []string{broken, fast}, Log: io.Discard, Timeout: 5 * time.Minute,
		Env: map[string]string{"WINDTUNNEL_ORDER_LOG": filepath.Join(t.TempDir(), "order.log")}}
	recs, failed, err := r.RunClaims(context.Background(), "^Test", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"github.com/windtunnel/windtunnel/scenarios/audit/testdata/broken: does not build"}, failed)
	require.Len(t, recs, 2, "the package that builds ran its checks")
	out, err := os.ReadFile(filepath.Join(r.Out, "claims", "output.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(out), "cannot use \"not a number\"")
}

// TestBuildTestsBuildsTogetherOrOneByOne: packages whose binaries go can
// name apart are built by one go command, and each binary lands at its
// testBinary name and runs its own tests; packages whose last elements
// collide (go would write both to one name) are built one at a time, each
// to its own name. Nothing of the shared build is left behind.
func TestBuildTestsBuildsTogetherOrOneByOne(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go test -c")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	r := Runner{Root: root, Out: t.TempDir(), Log: io.Discard, Timeout: 5 * time.Minute}
	for _, pkgs := range [][]string{
		{"./scenarios/audit/testdata/order/fast", "./scenarios/audit/testdata/order/slow"},
		{"./scenarios/audit/testdata/order/fast", "./scenarios/audit/testdata/twin/fast"},
	} {
		dir := t.TempDir()
		assert.Equal(t, len(pkgs) == 2 && filepath.Base(pkgs[0]) != filepath.Base(pkgs[1]), r.buildTogether(context.Background(), t.TempDir(), pkgs, "", nil),
			"built together exactly when go can name the binaries apart: %v", pkgs)
		bins, failed := r.buildTests(context.Background(), dir, pkgs, "", 2)
		require.Empty(t, failed)
		require.Len(t, bins, len(pkgs))
		for _, pkg := range pkgs {
			require.Equal(t, testBinary(dir, pkg), bins[pkg])
			out, err := exec.Command(bins[pkg], "-test.list", ".").CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.NotEmpty(t, strings.TrimSpace(string(out)), "%s lists its own tests", pkg)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, entries, len(pkgs), "only the binaries are left: %v", entries)
	}
}

package simtest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A simulation test whose package starts a goroutine fails on the scan
// without asking for it, and passes with -sim.scan=false or its
// environment form.
func TestScanFailsAForbiddenConstruct(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	goTest := func(env []string, args ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"test", "-count=1", "./testdata/scanbad"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	out, err := goTest(nil)
	require.Error(t, err, "the scan fails the test: %s", out)
	assert.Contains(t, out, "breaks the determinism contract")
	assert.Contains(t, out, "bad.go:7:")
	assert.Contains(t, out, "go statement")

	out, err = goTest(nil, "-sim.scan=false")
	require.NoError(t, err, "-sim.scan=false skips the scan: %s", out)
	out, err = goTest([]string{"WINDTUNNEL_SIM_SCAN=false"})
	require.NoError(t, err, "and so does its environment form: %s", out)
}

// The scan covers the test's package and the module's packages it
// imports, but not windtunnel's simulator and seam.
func TestScanCoversTheModuleOutsideTheSimulator(t *testing.T) {
	vs, err := scanTestPackage("testdata/scanbad")
	require.NoError(t, err)
	require.Len(t, vs, 1, "%v", vs)
	assert.Contains(t, vs[0], "bad.go:7:")
	vs, err = scanTestPackage(".")
	require.NoError(t, err)
	assert.Empty(t, vs, "simtest itself runs real goroutines, and is not scanned")
}

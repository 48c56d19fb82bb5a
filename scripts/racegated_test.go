package scripts_test

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// make unit runs, of the packages whose tests read underRace, only the tests
// race-gated-tests.sh names; make race runs the rest of them. A test the
// script missed would run in neither in full, one it named wrongly would run
// twice: so it names exactly the test functions whose bodies read underRace
// or UnderRace, not a helper's or a constant's mention, nor a name that only
// contains the word.
func TestRaceGatedTestsAreTheOnesReadingUnderRace(t *testing.T) {
	out, err := exec.Command("./race-gated-tests.sh", "testdata/racegated").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "^(TestAlsoGated|TestGated)$\n", string(out))
	re := regexp.MustCompile(string(out[:len(out)-1]))
	for name, want := range map[string]bool{"TestGated": true, "TestAlsoGated": true, "TestGatedMore": false, "TestPlain": false} {
		assert.Equal(t, want, re.MatchString(name), name)
	}
}

func TestRaceGatedTestsWithoutAnyIsEmpty(t *testing.T) {
	out, err := exec.Command("./race-gated-tests.sh", t.TempDir()).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Empty(t, string(out))
}

func TestRaceGatedTestsRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"testdata/no-such-dir"}} {
		out, err := exec.Command("./race-gated-tests.sh", args...).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: %s", args, out)
		assert.Equal(t, 2, ee.ExitCode(), "%v", args)
		assert.NotEmpty(t, string(out), "%v: says why", args)
	}
}

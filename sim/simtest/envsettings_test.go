package simtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownSettingsInTheEnvironmentAreRefused: a WINDTUNNEL_SIM_
// variable that is no flag's stops the run, naming the variable and the
// setting it was probably meant to be, or every setting when none is near;
// a run without one goes on.
func TestUnknownSettingsInTheEnvironmentAreRefused(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seedz") + "=5"})
	require.Error(t, err, out)
	assert.Contains(t, out, `WINDTUNNEL_SIM_SEEDZ="5" is no setting (did you mean WINDTUNNEL_SIM_SEED or WINDTUNNEL_SIM_SEEDS?)`)
	assert.Equal(t, 1, strings.Count(out, "invalid simulation settings"), "reported once")
	assert.NotContains(t, out, "the settings are", "a near name is enough")
	assert.NotContains(t, out, "seeds (random)", "no seed ran")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.colour") + "=red"})
	require.Error(t, err, out)
	assert.Contains(t, out, `WINDTUNNEL_SIM_COLOUR="red" is no setting; the settings are WINDTUNNEL_SIM_ARTIFACTS, `)
	assert.Contains(t, out, "WINDTUNNEL_SIM_SEEDS, ")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{"windtunnel_sim_seeds=3"})
	require.Error(t, err, out)
	assert.Contains(t, out, `windtunnel_sim_seeds="3" is no setting (did you mean WINDTUNNEL_SIM_SEEDS?)`)

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=3", "WINDTUNNEL_SIMULATE=1", "WINDTUNNEL_CLAIMS=" + filepath.Join(dir, "c.jsonl")})
	require.NoError(t, err, out)
	assert.Contains(t, out, "3 seeds (random), 0 failed")
	assert.NotContains(t, out, "is no setting")
}

// TestSettingErrorsNameWhatTheUserSet: a bad value set through the
// environment is reported under its variable, one set on the command line
// under its flag.
func TestSettingErrorsNameWhatTheUserSet(t *testing.T) {
	dir := t.TempDir()
	out, err := childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=-1"})
	require.Error(t, err, out)
	assert.Contains(t, out, "WINDTUNNEL_SIM_SEEDS must be positive, got -1")
	assert.NotContains(t, out, "-sim.seeds must be positive")

	out, err = childRun(t, dir, "TestFixture", "pass", nil, "-sim.seeds=-1")
	require.Error(t, err, out)
	assert.Contains(t, out, "-sim.seeds must be positive, got -1")
	assert.NotContains(t, out, "WINDTUNNEL_SIM_SEEDS")

	// The flag wins over the variable, and so does its name in the error.
	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=3"}, "-sim.seeds=-1")
	require.Error(t, err, out)
	assert.Contains(t, out, "-sim.seeds must be positive, got -1")
	assert.NotContains(t, out, "WINDTUNNEL_SIM_SEEDS must")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.seeds") + "=abc"})
	require.Error(t, err, out)
	assert.Contains(t, out, `WINDTUNNEL_SIM_SEEDS="abc"`)
	assert.NotContains(t, out, "flag -sim.seeds")
	out, err = childRun(t, dir, "TestFixture", "pass", nil, "-sim.seeds=abc")
	require.Error(t, err, out)
	assert.Contains(t, out, `invalid value "abc" for flag -sim.seeds`)
	assert.NotContains(t, out, "WINDTUNNEL_SIM_SEEDS")

	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.shrink.wall") + "=0s"})
	require.Error(t, err, out)
	assert.Contains(t, out, "WINDTUNNEL_SIM_SHRINK_WALL must be positive, got 0s")
	out, err = childRun(t, dir, "TestFixture", "pass", []string{EnvName("sim.trace") + "=" + filepath.Join(dir, "t.txt")})
	require.Error(t, err, out)
	assert.Contains(t, out, "WINDTUNNEL_SIM_TRACE needs -sim.seed or -sim.replay")
}

// TestTheKnownSettingsAreTheFlags: the variables known are those of the
// registered -sim flags, every one, so a flag added later is known too.
func TestTheKnownSettingsAreTheFlags(t *testing.T) {
	known := knownEnv()
	for _, name := range []string{"sim.seed", "sim.seeds", "sim.pct.depth", "sim.replay.guided", "sim.shard", "sim.shrink.wall"} {
		assert.Contains(t, known, EnvName(name))
	}
	assert.True(t, slices.IsSorted(known))
	assert.NotContains(t, known, "WINDTUNNEL_CLAIMS")

	assert.NoError(t, unknownEnv(known, []string{"PATH=/bin", EnvName("sim.seeds") + "=3", "WINDTUNNEL_CLAIMS=f", "WINDTUNNEL_CLAIMS_SCREEN=1", "WINDTUNNEL_MUTANT=m"}))
	err := unknownEnv(known, []string{EnvName("sim.paralel") + "=2", EnvName("sim.shrink.atempts") + "=9"})
	require.Error(t, err)
	assert.Equal(t, `WINDTUNNEL_SIM_PARALEL="2" is no setting (did you mean WINDTUNNEL_SIM_PARALLEL?); WINDTUNNEL_SIM_SHRINK_ATEMPTS="9" is no setting (did you mean WINDTUNNEL_SIM_SHRINK_ATTEMPTS?)`, err.Error())

	assert.Equal(t, 0, editDistance("SEEDS", "SEEDS"))
	assert.Equal(t, 1, editDistance("SEEDZ", "SEEDS"))
	assert.Equal(t, 1, editDistance("SEEDZ", "SEED"))
	assert.Equal(t, 3, editDistance("", "OUT"))
	assert.Empty(t, nearestEnv("WINDTUNNEL_SIM_COLOUR", known))
}

// settingVar is a variable of the settings' form as the project's files
// write it; WINDTUNNEL_SIM_X_Y is how the documentation writes the form.
var settingVar = regexp.MustCompile(`WINDTUNNEL_SIM_[A-Z0-9_]+`)

// TestEveryVariableTheProjectSetsIsASetting: a WINDTUNNEL_SIM_ variable
// the project's code, Makefile or scripts set is a registered flag's, or
// the runs it is set for would stop at it.
func TestEveryVariableTheProjectSetsIsASetting(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module's root")
	self, err := filepath.Abs("envsettings_test.go")
	require.NoError(t, err)
	known := knownEnv()
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || path == filepath.Join(root, "out")) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".sh" && ext != ".mk" && d.Name() != "Makefile" {
			return nil
		}
		if path == self {
			return nil // it writes misspelled variables on purpose
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, name := range settingVar.FindAllString(string(text), -1) {
			rel, _ := filepath.Rel(root, path)
			seen[name] = true
			if name != "WINDTUNNEL_SIM_X_Y" {
				assert.Contains(t, known, name, "%s sets a variable no -sim flag reads", rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, seen["WINDTUNNEL_SIM_SEEDS"], "the walk found the Makefile's and the audit's settings: %v", seen)
	assert.True(t, seen["WINDTUNNEL_SIM_SHARD"], "%v", seen)
}

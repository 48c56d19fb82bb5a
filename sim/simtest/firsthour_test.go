package simtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// artifactsOf is the artifact directory a failure block names.
func artifactsOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`artifacts  (\S+) \(`).FindStringSubmatch(out)
	require.NotNil(t, m, "the failure block names its artifacts:\n%s", out)
	return m[1]
}

// A replay writes what it produces beside its input, never over it: not
// when it fails as recorded, and not when it fails otherwise (here the
// code changed, so the run leaves the recorded schedule).
func TestReplayNeverWritesOverItsInput(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "art")
	out, err := child(t, dir, "fail", "-sim.out="+art, "-sim.record=false")
	require.Error(t, err, out)
	recorded := filepath.Join(artifactsOf(t, out), "replay.txt")
	before, err := os.ReadFile(recorded)
	require.NoError(t, err)

	for i, mode := range []string{"fail", "nondeterministic"} {
		again, err := child(t, dir, mode, "-sim.replay="+recorded, "-sim.out="+art)
		require.Error(t, err, "the replay fails (mode %s):\n%s", mode, again)
		after, err := os.ReadFile(recorded)
		require.NoError(t, err)
		require.Equal(t, string(before), string(after), "the replay of mode %s left its input byte for byte", mode)
		produced := filepath.Join(filepath.Dir(recorded), fmt.Sprintf("replay-%d", i+1))
		if strings.Contains(again, "artifacts  "+produced) {
			assert.FileExists(t, filepath.Join(produced, "replay.txt"), "what the replay produced lies beside its input")
		} else {
			assert.Contains(t, again, "artifacts  not written", "a replay's artifacts go to %s:\n%s", produced, again)
		}
	}
	// Asking for the trace of the input itself is refused too.
	again, err := child(t, dir, "fail", "-sim.replay="+recorded, "-sim.out="+art, "-sim.trace="+recorded)
	require.Error(t, err)
	assert.Contains(t, again, "it is the replay file this run reads")
	after, err := os.ReadFile(recorded)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// A run of a mutant (named by the tools that run one, or an -overlay given
// to the go command) keeps its failing seeds out of the corpus, puts its
// artifacts with the mutant's, and prints commands that apply the mutant.
func TestMutantSeedsNeverEnterTheCorpus(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "art")
	out, err := childRun(t, dir, "TestFixture", "fail", []string{MutantEnv + "=oc-my-mutant"}, "-sim.out="+art)
	require.Error(t, err, out)
	assert.Contains(t, out, "the seed was not added to the corpus: it failed mutant oc-my-mutant")
	assert.NoFileExists(t, filepath.Join(dir, corpusPath("TestFixture")))
	assert.Contains(t, artifactsOf(t, out), filepath.Join(art, "mutant=oc-my-mutant"), "a mutant's artifacts go with the mutant")
	assert.Contains(t, out, "code       mutant oc-my-mutant, not the checkout's")
	assert.Regexp(t, `make replay MUTANT=oc-my-mutant PKG=\S+ TEST=TestFixture SEED=0x[0-9a-f]+ ARGS=-sim.strategy=random`, out)
	assert.Regexp(t, `make shrink MUTANT=oc-my-mutant PKG=\S+ TEST=TestFixture SEED=0x[0-9a-f]+`, out)
	recorded := filepath.Join(artifactsOf(t, out), "replay.txt")
	assert.Contains(t, out, "make replay FILE="+recorded)
	data, err := os.ReadFile(recorded)
	require.NoError(t, err)
	assert.Contains(t, string(data), "\nmutant oc-my-mutant\n", "the replay file names the code it flew")

	// Replayed on the checkout's code, the file is refused, with the
	// command that applies its mutant.
	again, err := child(t, dir, "fail", "-sim.replay="+recorded)
	require.Error(t, err)
	assert.Contains(t, again, "was recorded under mutant oc-my-mutant")
	assert.Contains(t, again, "make replay FILE="+recorded)

	// An -overlay on the go command is a mutant of unknown name.
	out, err = childRun(t, dir, "TestFixture", "fail", []string{"GOFLAGS=-overlay=/somewhere/overlay.json"}, "-sim.out="+art)
	require.Error(t, err, out)
	assert.Contains(t, out, "the seed was not added to the corpus: it failed the overlay /somewhere/overlay.json")
	assert.Contains(t, out, "go test -overlay=/somewhere/overlay.json ")
	assert.NoFileExists(t, filepath.Join(dir, corpusPath("TestFixture")))
}

// A corpus seed that is also one of the regular seeds, or listed twice,
// runs and counts once.
func TestCorpusSeedRunsOnce(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "testdata", "windtunnel"), 0o755))
	seed := SeedAt("TestFixture", 1)
	corpus := fmt.Sprintf("%#x # also regular seed 2\n%#x # listed twice\n0x5eed\n", seed, seed)
	require.NoError(t, os.WriteFile(filepath.Join(dir, corpusPath("TestFixture")), []byte(corpus), 0o644))
	out, err := child(t, dir, "pass", "-sim.seeds=3")
	require.NoError(t, err, out)
	assert.Contains(t, out, "4 seeds (random), 0 failed", "two distinct corpus seeds, one of them regular: 3 regular + 1")
	assert.Equal(t, 1, strings.Count(out, fmt.Sprintf("=== RUN   TestFixture/seed=%#x\n", seed)))
}

func TestOverlayOfFindsTheGoCommandsOverlay(t *testing.T) {
	for _, c := range []struct {
		goflags string
		parent  []string
		want    string
	}{
		{"", []string{"go", "test", "-overlay=/o.json", "./x"}, "/o.json"},
		{"", []string{"go", "test", "--overlay", "/o.json", "./x"}, "/o.json"},
		{"-count=1 -overlay=/g.json", nil, "/g.json"},
		{"", []string{"go", "test", "./x", "-run", "overlay"}, ""},
		{"", nil, ""},
	} {
		assert.Equal(t, c.want, overlayOf(c.goflags, c.parent), "GOFLAGS %q, parent %q", c.goflags, c.parent)
	}
}

package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const schemaSrc = `package p

const Limit = 3

// F adds.
func F(a int, _ string, more ...int) int {
	return a + Limit
}

func (*T) M() {
	println("m")
}

type T struct{}

func G[X any](x X) X { return x }
`

func TestSchematizeDispatchesFunctionEditsAndLeavesTheRest(t *testing.T) {
	ms := []Mutant{
		{ID: "f-plus", Old: "return a + Limit", New: "return a + Limit + 1"},
		{ID: "f-minus", Old: "a + Limit\n", New: "a - Limit\n"},
		{ID: "m-quiet", Old: `println("m")`, New: `_ = 0`},
		{ID: "g-zero", Old: "return x", New: "var z X; return z"},
		{ID: "limit", Old: "const Limit = 3", New: "const Limit = 4"},
	}
	out, in, rest, pkg, err := schematize(schemaSrc, ms, 7)
	require.NoError(t, err)
	assert.Equal(t, "p", pkg)
	assert.Len(t, in, 4)
	require.Len(t, rest, 1)
	assert.Equal(t, "limit", rest[0].ID, "a constant needs a build of its own")
	assert.Contains(t, out, `if wtMutant == "f-plus" {`)
	assert.Contains(t, out, "return F__wt7_0(a, wtP1_0, more...)")
	assert.Contains(t, out, "func (wtR0 *T) M() {")
	assert.Contains(t, out, "wtR0.M__wt7_2()\n\t\treturn")
	assert.Contains(t, out, "return G__wt7_3[X](x)")
	assert.Contains(t, out, "return a + Limit + 1")
	// It compiles.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(out+"\nvar wtMutant string\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module p\n\ngo 1.26\n"), 0o644))
	cmd := exec.Command("go", "vet", ".")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", b, out)
}

// The schema of the whole catalogue builds: the one build that serves
// every schematized mutant.
func TestTheCatalogueSchemaBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds impl/ with the schema overlay")
	}
	root := filepath.Join("..", "..")
	ms, err := Everything(root)
	require.NoError(t, err)
	sc, err := BuildSchema(root, t.TempDir(), ms)
	require.NoError(t, err)
	assert.Greater(t, len(sc.In), len(ms)/2, "most mutants are schematized (%d of %d)", len(sc.In), len(ms))
	cmd := exec.Command("go", "build", "-overlay="+sc.Overlay, "./impl/...")
	cmd.Dir = root
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	t.Logf("%d of %d mutants in one schema build; %d need their own", len(sc.In), len(ms), len(sc.Separate))
	// The constants' mutants are served at their one use; the ones left
	// edit the collector's ChunkPoints (referred to throughout the
	// collector) and the timer wheel's DefaultTick (the value of the
	// cop's DefaultTick, another constant), and the Race mutants run
	// under the race detector, on builds of their own.
	var sep []string
	for _, m := range sc.Separate {
		sep = append(sep, m.ID)
	}
	want := []string{"dr-chunk-size-2048", "tol-dr-6-chunk-points-widened", "tol-dr-10-copied-per-key-widened", "tol-tw-2-tick-widened"}
	races := 0
	for _, m := range ms {
		if m.Race {
			want = append(want, m.ID)
			races++
		}
	}
	assert.GreaterOrEqual(t, races, 7, "the Race mutants of DR, MS, OC and LF")
	assert.ElementsMatch(t, want, sep)

	// The Race mutants have a schema of their own, for race-detector
	// builds: every one of them in it, and nothing else.
	rsc, err := BuildRaceSchema(root, t.TempDir(), ms)
	require.NoError(t, err)
	assert.Len(t, rsc.In, races, "every Race mutant is in the race schema")
	assert.Empty(t, rsc.Separate)
	cmd = exec.Command("go", "build", "-overlay="+rsc.Overlay, "./impl/...")
	cmd.Dir = root
	b, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
}

// A schema build registers its selected mutant with the module's
// faultswitch package, so a shrinker in the test binary can run the code
// without it; with no mutant selected nothing is registered. The scratch
// module carries a copy of the real faultswitch package.
func TestTheSchemaSwitchCanBeTurnedOff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module")
	}
	root := t.TempDir()
	fs, err := os.ReadFile(filepath.Join("..", "..", "sim", "faultswitch", "faultswitch.go"))
	require.NoError(t, err)
	files := map[string]string{
		"go.mod":                         "module m\n\ngo 1.26\n",
		"sim/faultswitch/faultswitch.go": string(fs),
		"lim/lim.go":                     "package lim\n\n// F is 1.\nfunc F() int {\n\treturn 1\n}\n",
		"fam/fam_test.go": `package fam

import (
	"fmt"
	"testing"

	"m/lim"
	"m/sim/faultswitch"
)

func TestProbe(t *testing.T) {
	off := 0
	faultswitch.Without(func() { off = lim.F() })
	fmt.Println("registered", faultswitch.Registered(), "on", lim.F(), "off", off)
}
`,
	}
	for name, body := range files { //windtunnel:unordered writes independent files
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	ms := []Mutant{{ID: "f-two", File: "lim/lim.go", Old: "return 1", New: "return 2", Pkg: "./fam", Tests: "TestProbe"}}
	sc, err := BuildSchema(root, t.TempDir(), ms)
	require.NoError(t, err)
	require.True(t, sc.In["f-two"])
	for id, want := range map[string]string{"f-two": "registered true on 2 off 1", "": "registered false on 1 off 1"} { //windtunnel:unordered one independent run per mutant
		cmd := exec.Command("go", "test", "-count=1", "-overlay="+sc.Overlay, "-run", "TestProbe", "-v", "./fam")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), MutantEnv+"="+id)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		assert.Contains(t, string(b), want, "mutant %q", id)
	}
}

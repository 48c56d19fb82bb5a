package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A scratch module: package lim holds constants used once, twice, from a
// constant, from another package, under a shadowing local and with a type;
// the family package fam's test binary imports lim and use.
var constModule = map[string]string{
	"go.mod": "module m\n\ngo 1.26\n",
	"lim/lim.go": `package lim

import "time"

const (
	Once  = 2 * time.Second
	Twice = 3
	Typed int64 = 7
	Base  = 5
	Chain = Base
	Shadowed = 4 * time.Second
	Abroad = 9
	Init = 11
)

var initialized = Init

func F() time.Duration { return Once }

func G() int { return Twice + Twice }

func T() int64 { return Typed }

func C() int { return Chain }

func S() time.Duration {
	time := 1
	_ = time
	return Shadowed
}

func I() int { return initialized }
`,
	"use/use.go": `package use

import "m/lim"

func A() int { return lim.Abroad }
`,
	"fam/fam.go":      "package fam\n",
	"fam/fam_test.go": "package fam\n\nimport (\n\t\"testing\"\n\n\t\"m/lim\"\n\t\"m/use\"\n)\n\nfunc TestX(t *testing.T) { _, _ = lim.F(), use.A() }\n",
}

func TestAConstantIsSchematizedAtItsOneUse(t *testing.T) {
	root := t.TempDir()
	for name, body := range constModule { //windtunnel:unordered writes independent files
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	mutant := func(id, old, new string) Mutant {
		return Mutant{ID: id, File: "lim/lim.go", Old: old, New: new, Pkg: "./fam", Tests: "TestX"}
	}
	ms := []Mutant{
		mutant("once", "Once  = 2 * time.Second", "Once  = 3 * time.Second"),
		mutant("once-literal", "2 * time.Second", "2100 * time.Millisecond"),
		mutant("typed", "Typed int64 = 7", "Typed int64 = 8"),
		mutant("twice", "Twice = 3", "Twice = 4"),
		mutant("chain", "Base  = 5", "Base  = 6"),
		mutant("shadowed", "4 * time.Second", "5 * time.Second"),
		mutant("abroad", "Abroad = 9", "Abroad = 10"),
		mutant("init", "Init = 11", "Init = 12"),
		mutant("renamed", "Once  = 2 * time.Second", "Other = 2 * time.Second"),
	}
	binaries := map[string]*binaryFiles{}
	want := map[string]string{"once": "(3 * time.Second)", "once-literal": "(2100 * time.Millisecond)", "typed": "int64(8)"}
	for _, m := range ms {
		st, ok, err := constantUse(root, m, binaries)
		require.NoError(t, err, m.ID)
		text, served := want[m.ID]
		if !assert.Equal(t, served, ok, "%s: schematized at its use", m.ID) || !ok {
			continue
		}
		assert.Equal(t, "lim/lim.go", st.useFile, m.ID)
		assert.Equal(t, text, st.text, m.ID)
		src := constModule["lim/lim.go"]
		assert.Equal(t, map[string]string{"once": "Once", "once-literal": "Once", "typed": "Typed"}[m.ID], src[st.at:st.end], "%s: the use is replaced", m.ID)
	}

	// The schema builds, and the mutated copies return the mutated values.
	sc, err := BuildSchema(root, t.TempDir(), ms)
	require.NoError(t, err)
	for id := range want { //windtunnel:unordered one assertion per mutant
		assert.True(t, sc.In[id], id)
	}
	var sep []string
	for _, m := range sc.Separate {
		sep = append(sep, m.ID)
	}
	assert.ElementsMatch(t, []string{"twice", "chain", "shadowed", "abroad", "init", "renamed"}, sep)
	probe := "package fam\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n\n\t\"m/lim\"\n)\n\nfunc TestProbe(t *testing.T) { fmt.Println(\"got\", lim.F(), lim.T()) }\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "fam", "probe_test.go"), []byte(probe), 0o644))
	for id, out := range map[string]string{"": "got 2s 7", "once": "got 3s 7", "once-literal": "got 2.1s 7", "typed": "got 2s 8"} { //windtunnel:unordered one independent run per mutant
		cmd := exec.Command("go", "test", "-count=1", "-overlay="+sc.Overlay, "-run", "TestProbe", "-v", "./fam")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), MutantEnv+"="+id)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		assert.Contains(t, string(b), out, "mutant %q", id)
	}
}

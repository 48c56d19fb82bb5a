package mechanical

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reviewed list parses, and a malformed line is refused by line number.
func TestEquivalentsParse(t *testing.T) {
	got, err := Equivalents()
	require.NoError(t, err)
	for key, arg := range got { //windtunnel:unordered each entry checked alone
		assert.Len(t, key, 12)
		assert.NotEmpty(t, arg)
	}
	ok, err := parseEquivalents("# comment\n\n0123456789ab the counter is only read by tests\n")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"0123456789ab": "the counter is only read by tests"}, ok)
	for text, want := range map[string]string{ //windtunnel:unordered each case alone
		"xyz argument\n":                       `equivalent.txt:1: "xyz" is not a mutant key`,
		"0123456789ab\n":                       "needs a one-line argument",
		"0123456789ab a\n0123456789ab b\n":     "listed twice",
		"# c\n0123456789aB upper-case digit\n": "equivalent.txt:2:",
	} {
		_, err := parseEquivalents(text)
		assert.ErrorContains(t, err, want, text)
	}
}

// A printed mutant ID finds its mutant again, as make replay MUTANT=ID needs.
func TestFindReturnsTheNamedVariant(t *testing.T) {
	root := moduleRoot(t)
	g, err := Generate(root, Target{Dir: "impl/relay", Families: []string{"./scenarios/oc", "./scenarios/ms"}})
	require.NoError(t, err)
	require.NotEmpty(t, g.Mutants)
	want := g.Mutants[len(g.Mutants)/2].Variants[1]
	m, ok, err := Find(root, want.ID)
	require.NoError(t, err)
	require.True(t, ok, want.ID)
	assert.Equal(t, []string{want.ID}, []string{m.Variants[0].ID})
	assert.Equal(t, want.Old, m.Variants[0].Old)
	_, ok, err = Find(root, "mech-oc-relay-compare-1-999999")
	require.NoError(t, err)
	assert.False(t, ok)
}

// generated caches every target's mutants for the tests of this binary:
// two tests read them, one generation of the nine packages takes seconds,
// and neither test runs in parallel.
var generated []Mutant

// generateAll makes every target's mutants, once.
func generateAll() ([]Mutant, error) {
	if generated != nil {
		return generated, nil
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		return nil, err
	}
	var all []Mutant
	for _, tg := range Targets {
		g, err := Generate(root, tg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tg.Dir, err)
		}
		all = append(all, g.Mutants...)
	}
	generated = all
	return all, nil
}

// Every argued key names a mutant the generator makes today: an argument
// about code that has changed must be argued again, not outlive it.
func TestEveryArguedKeyIsStillGenerated(t *testing.T) {
	args, err := Equivalents()
	require.NoError(t, err)
	all, err := generateAll()
	require.NoError(t, err)
	keys := map[string]bool{}
	for _, m := range all {
		keys[m.Key] = true
	}
	for key, arg := range args { //windtunnel:unordered each key checked alone
		assert.True(t, keys[key], "equivalent.txt: %s is no mutant of today's code: %s", key, arg)
	}
	assert.True(t, IsOwnChoice("own choice: a figure no claim names"))
	assert.False(t, IsOwnChoice("the guard is unreachable"))
}

// Every variant's ID is unique across every target: the audit names a
// variant's overlay and its verdict by ID, so two mutants sharing one
// would share both.
func TestEveryVariantIDIsUnique(t *testing.T) {
	all, err := generateAll()
	require.NoError(t, err)
	seen := map[string]string{}
	for _, m := range all {
		for _, v := range m.Variants {
			if prev, ok := seen[v.ID]; ok {
				t.Errorf("ID %s names both %s and %s", v.ID, prev, v.What)
			}
			seen[v.ID] = v.What
		}
	}
}

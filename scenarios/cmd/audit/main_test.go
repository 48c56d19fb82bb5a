package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the tests run this test binary as the audit command
// itself (WINDTUNNEL_AUDIT_MAIN=1), so a flag's error is checked end to end
// without building the command again.
func TestMain(m *testing.M) {
	if os.Getenv("WINDTUNNEL_AUDIT_MAIN") == "1" {
		os.Args = append([]string{"audit"}, strings.Fields(os.Getenv("WINDTUNNEL_AUDIT_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runAudit runs the command with args and returns its output and exit status.
func runAudit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "WINDTUNNEL_AUDIT_MAIN=1", "WINDTUNNEL_AUDIT_ARGS="+strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// Every bad flag is refused before anything runs, by a message that names
// the flag and the value; an unknown -only ID is an error, not dropped.
func TestEveryBadFlagIsNamed(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		rc   int
	}{
		{[]string{"-seeds", "0"}, `invalid value "0" for flag -seeds: want a positive number of seeds or "default", got "0"`, 2},
		{[]string{"-seeds", "many"}, `invalid value "many" for flag -seeds: want a positive number of seeds or "default", got "many"`, 2},
		{[]string{"-seeds", "5x"}, `invalid value "5x" for flag -seeds`, 2},
		{[]string{"-mutant-seeds", "-3"}, "audit: -mutant-seeds must be positive, got -3", 2},
		{[]string{"-j", "0"}, "audit: -j must be positive, got 0", 2},
		{[]string{"-timeout", "0s"}, "audit: -timeout must be positive, got 0s", 2},
		{[]string{"-shrink", "-1"}, "audit: -shrink must not be negative, got -1", 2},
		{[]string{"-shrink-more", "-1"}, "audit: -shrink-more must not be negative, got -1", 2},
		{[]string{"-shrink-wall", "0s"}, "audit: -shrink-wall must be positive, got 0s", 2},
		{[]string{"-shard", "3/2"}, "audit: -shard:", 2},
		{[]string{"-determinism", "-2"}, "audit: -determinism must not be negative, got -2", 2},
		{[]string{"stray"}, `audit: unexpected arguments ["stray"]`, 2},
		{[]string{"-only", "nosuch,oc-no-age-check", "-mutants=false"}, `audit: -only: no mutant "nosuch"`, 1},
		{[]string{"-verify-schemata", "-only", "nosuch"}, `audit: -only: no mutant "nosuch"`, 1},
		{[]string{"-bin", "/nonexistent/bin", "-run", "^TestLF1_", "-mutants=false"}, "audit: -bin /nonexistent/bin was not written by audit build", 1},
		{[]string{"build"}, "audit build: -bin DIR is required", 2},
		{[]string{"build", "-bin", "/nonexistent/bin", "-j", "0"}, "audit build: -j and -timeout must be positive, got 0", 2},
		{[]string{"build", "-bin", "/nonexistent/bin", "stray"}, `audit build: unexpected arguments ["stray"]`, 2},
		{[]string{"build", "-bin", "/nonexistent/bin", "-only", "nosuch"}, `audit build: -only: no mutant "nosuch"`, 1},
		{[]string{"merge", "-bin", "/nonexistent/bin"}, "audit merge: name the shard directories", 2},
	} {
		out, rc := runAudit(t, c.args...)
		assert.Equal(t, c.rc, rc, "%v: %s", c.args, out)
		assert.Contains(t, out, c.want, "%v", c.args)
	}
}

// -only selects the named mutants, in the catalogue's order, for the audit
// and for -verify-schemata alike.
func TestOnlySelectsTheNamedMutants(t *testing.T) {
	st, err := load()
	require.NoError(t, err)
	ms, err := selectMutants(st.ms, "oc-no-age-check,oc-union-drops-open-half")
	require.NoError(t, err)
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	assert.Equal(t, []string{"oc-union-drops-open-half", "oc-no-age-check"}, ids)
	all, err := selectMutants(st.ms, "")
	require.NoError(t, err)
	assert.Len(t, all, len(st.ms))
	assert.Len(t, st.ms, len(all), "the catalogue is not edited by a selection")
}

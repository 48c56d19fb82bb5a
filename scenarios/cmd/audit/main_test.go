package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
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
		{[]string{"-mutant-timeout", "-1s"}, "audit: -mutant-timeout must be positive, got -1s", 2},
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

// audit try runs a reviewer's own mutants, each on an overlay of its own,
// and says which check caught each and which survived. Here it tries a
// change that drops the open half from Granted (caught by OC-1) and one
// that edits a comment (which no check can catch). One survivor makes the
// exit status 1.
func TestTryReportsCaughtAndSurvived(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mutants.json")
	require.NoError(t, os.WriteFile(file, []byte(`[
 {"id": "granted-member-half-only-again", "file": "impl/accesschannels/cache.go",
  "old": "return contains(member, channel) || contains(open, channel), nil",
  "new": "return contains(member, channel) || (false && contains(open, channel)), nil",
  "pkg": "./scenarios/oc", "tests": "^TestOC1_UnionMatchesUncached"},
 {"id": "comment-only", "file": "impl/accesschannels/cache.go",
  "old": "// OC-10: member key includes the community", "new": "// the member key",
  "pkg": "./scenarios/oc", "tests": "^TestOC1_UnionMatchesUncached"}
]`), 0o644))
	out, rc := runAudit(t, "try", "-mutant-seeds", "3", "-out", filepath.Join(dir, "out"), file)
	assert.Equal(t, 1, rc, out)
	assert.Regexp(t, `granted-member-half-only-again +caught after [0-9]+ seed\(s\) by TestOC1_UnionMatchesUncached`, out)
	assert.Regexp(t, `comment-only +SURVIVED 3 seeds of the checks \^TestOC1_UnionMatchesUncached in ./scenarios/oc`, out)
	assert.Contains(t, out, "audit try: 1 caught, 1 survived, 0 could not be run")
}

// A try file is checked whole before anything runs: each mistake is named.
func TestTryRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	ok := `"id": "x", "file": "impl/accesschannels/cache.go", "old": "// OC-10: member key includes the community", "new": "// y"`
	for _, c := range []struct{ body, want string }{
		{`{`, "want a JSON array"},
		{`[]`, "no mutant"},
		{`[{` + ok + `, "pkg": "./scenarios/oc", "colour": "red"}]`, `unknown field "colour"`},
		{`[{` + ok + `}]`, `pkg "" is not a claim family`},
		{`[{` + ok + `, "pkg": "./impl/accesschannels"}]`, `pkg "./impl/accesschannels" is not a claim family`},
		{`[{` + ok + `, "pkg": "./scenarios/oc", "claims": ["OC-99"]}]`, "unknown claim OC-99"},
		{`[{"id": "x", "file": "impl/accesschannels/cache.go", "old": "no such text", "new": "y", "pkg": "./scenarios/oc"}]`, "occurs 0 times"},
		{`[{"id": "oc-no-age-check", "file": "impl/accesschannels/cache.go", "old": "a", "new": "b", "pkg": "./scenarios/oc"}]`, "the catalogue already has that ID"},
		{`[{` + ok + `, "pkg": "./scenarios/oc", "seeds": 3}]`, "kind and seeds are the audit's"},
	} {
		file := filepath.Join(dir, "m.json")
		require.NoError(t, os.WriteFile(file, []byte(c.body), 0o644))
		out, rc := runAudit(t, "try", file)
		assert.Equal(t, 2, rc, "%s: %s", c.body, out)
		assert.Contains(t, out, c.want, c.body)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"try"}, "audit try: name one file of mutants"},
		{[]string{"try", "-j", "0", "m.json"}, "audit try: -mutant-seeds, -j and -timeout must be positive"},
		{[]string{"try", filepath.Join(dir, "missing.json")}, "no such file"},
	} {
		out, rc := runAudit(t, c.args...)
		assert.Equal(t, 2, rc, "%v: %s", c.args, out)
		assert.Contains(t, out, c.want, "%v", c.args)
	}
}

// A mutant that makes a check loop forever (here TW-6's, over a timer
// list whose unlink leaves a stale back link) is caught as a hang when the
// mutant's limit runs out, naming the test that was still running, and
// holds its slot no longer than that.
func TestTryCatchesAHangWhenItsLimitRunsOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hang.json")
	require.NoError(t, os.WriteFile(file, []byte(`[{"id": "unlink-leaves-next-prev", "file": "impl/timerwheel/element.go",
  "old": "\tif e.next != nil {\n\t\te.next.prev = e.prev\n\t}", "new": "", "pkg": "./scenarios/tw", "tests": "^TestTW6_ScheduleCancelsFirst$"}]`), 0o644))
	start := time.Now()
	out, rc := runAudit(t, "try", "-timeout", "3s", "-mutant-seeds", "2", "-out", filepath.Join(dir, "out"), file)
	assert.Equal(t, 0, rc, out)
	assert.Contains(t, out, "by TestTW6_ScheduleCancelsFirst (a hang: still running when the 3s limit ran out)")
	assert.Less(t, time.Since(start), 90*time.Second, "the hang held its slot past its limit")
}

// A try mutant marked race runs its family's RaceFree checks unless it
// names others: a lock left out is a data race, which only those checks,
// under the race detector, can see.
func TestTryRaceMutantsDefaultToTheRaceFreeChecks(t *testing.T) {
	st, err := load()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "race.json")
	body := `[{"id": "mine", "race": true, "pkg": "./scenarios/lf", "file": "impl/logfilter/spanaware.go",
	  "old": "\tf.mu.Lock()\n\tf.spans[s] = level\n\tf.mu.Unlock()", "new": "\tf.spans[s] = level"}]`
	require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
	ms, err := readTryFile(file, st)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.True(t, ms[0].Race)
	assert.Equal(t, mutants.RaceFreeTests, ms[0].Tests)
}

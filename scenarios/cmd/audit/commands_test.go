package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pasted runs a printed command as a person would: in a shell at the
// module's root, with OUT pointing at a scratch directory so the checkout
// stays clean, and extra environment the original run had.
func pasted(t *testing.T, command string, env ...string) (string, bool) {
	t.Helper()
	root, err := moduleRoot()
	require.NoError(t, err)
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "OUT="+t.TempDir()), env...)
	cmd.WaitDelay = time.Minute
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s: %s", command, out)
	}
	return string(out), err == nil
}

// printed finds every command a run printed after label (": " or a line
// of its own), in order.
func printed(out, label string) []string {
	re := regexp.MustCompile(regexp.QuoteMeta(label) + `:?\s*\n?\s*(?:` + "`" + `)?((?:make|go test) [^` + "`" + `\n]+)`)
	var cmds []string
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		cmds = append(cmds, strings.TrimSpace(m[1]))
	}
	return cmds
}

// failureOf is the first line of the failure a failure block shows.
func failureOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`failure    (.+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no failure block in:\n%s", out)
	return m[1]
}

// Every command the project prints to reproduce a failure reproduces it
// when pasted at the module's root: a test failure's, an audit mutant's and
// a try-mutants mutant's, for the seed, its recorded run and its shrunk
// run.
func TestPrintedCommandsReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the audit, a try and the commands they print, each a go test build")
	}
	t.Run("test failure", func(t *testing.T) {
		root, err := moduleRoot()
		require.NoError(t, err)
		cmd := exec.Command("go", "test", "-count=1", "./sim/simtest", "-run", "^TestFixture$", "-sim.record=false", "-sim.shrink", "-sim.out="+t.TempDir())
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "WINDTUNNEL_FIXTURE=fail")
		b, err := cmd.CombinedOutput()
		out := string(b)
		require.Error(t, err, out)
		want := failureOf(t, out)
		cmds := append(printed(out, "reproduce"), printed(out, "replay the recorded run (the file holds the seed, every setting and the code it flew)")...)
		cmds = append(cmds, printed(out, "replay the shrunk run (the file holds its choices and schedule)")...)
		require.Len(t, cmds, 3, "the seed's, its recording's and its shrunk run's command:\n%s", out)
		for _, c := range cmds {
			// The fixture fails the checkout's code on purpose: its seed
			// must not enter sim/simtest's corpus.
			got, ok := pasted(t, c, "WINDTUNNEL_FIXTURE=fail", "WINDTUNNEL_SIM_RECORD=false")
			assert.False(t, ok, "%s reproduces the failure:\n%s", c, got)
			assert.Equal(t, want, failureOf(t, got), c)
		}
	})
	t.Run("audit mutant", func(t *testing.T) {
		dir := t.TempDir()
		out, rc := runAudit(t, "-only", "oc-no-age-check", "-run", "^TestOC2_", "-seeds", "default", "-mutant-seeds", "5", "-shrink", "30", "-out", dir)
		require.Equal(t, 0, rc, out)
		cmds := printed(out, "reproduce")
		md, err := os.ReadFile(filepath.Join(dir, "AUDIT.md"))
		require.NoError(t, err)
		cmds = append(cmds, printed(string(md), "reproduce")...)
		cmds = append(cmds, printed(string(md), "; replay")...)
		require.Len(t, cmds, 3, "the log's, AUDIT.md's and the shrunk run's command:\n%s\n%s", out, md)
		assert.Equal(t, cmds[0], cmds[1], "the log and AUDIT.md print the same command")
		for _, c := range cmds {
			assert.Contains(t, c, "make replay ")
			got, ok := pasted(t, c)
			assert.False(t, ok, "%s reproduces the catch:\n%s", c, got)
			assert.Contains(t, got, "failure    check: OC-2: grant-staleness", c)
			assert.Contains(t, got, "code       mutant oc-no-age-check, not the checkout's", c)
		}
	})
	t.Run("try-mutants mutant", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "mine.json")
		mine := []map[string]string{{"id": "my-open-set-never-ages", "file": "impl/accesschannels/open.go",
			"old": "fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen))", "new": "fresh := true",
			"pkg": "./scenarios/oc", "tests": "^TestOC2_SharedRead"}}
		data, err := json.Marshal(mine)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, data, 0o644))
		out, rc := runAudit(t, "try", "-mutant-seeds", "5", "-out", filepath.Join(dir, "try"), file)
		require.Equal(t, 0, rc, out)
		cmds := printed(out, "reproduce")
		require.Len(t, cmds, 1, out)
		assert.Contains(t, cmds[0], "MUTANT=my-open-set-never-ages MUTANTS="+file)
		got, ok := pasted(t, cmds[0])
		assert.False(t, ok, "%s reproduces the catch:\n%s", cmds[0], got)
		assert.Contains(t, got, "code       mutant my-open-set-never-ages (from "+file+"), not the checkout's")
		// The failure it prints names its own commands, which apply the
		// mutant too: pasted, the recorded run fails the same way.
		recorded := printed(got, "replay the recorded run (the file holds the seed, every setting and the code it flew)")
		require.Len(t, recorded, 1, got)
		again, ok := pasted(t, recorded[0])
		assert.False(t, ok, again)
		assert.Equal(t, failureOf(t, got), failureOf(t, again))
		assert.NoDirExists(t, filepath.Join("..", "..", "oc", "testdata", "windtunnel"), "a mutant's seeds never enter the corpus")
	})
}

// make replay and make shrink say what is wrong with what they were given,
// and a shrink of a run that passes says there is nothing to shrink.
func TestReplayAndShrinkRefuseBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"shrink", "-pkg", "./scenarios/nope", "-test", "TestX", "-seed", "1"}, "no package ./scenarios/nope in this module"},
		{[]string{"replay"}, "name the run: -file FILE (FILE=), or -pkg, -test and -seed"},
		{[]string{"replay", "-pkg", "./scenarios/oc", "-test", "NotATest", "-seed", "1"}, `-test "NotATest" is not a test name`},
		{[]string{"replay", "-pkg", "./scenarios/oc", "-test", "TestX", "-seed", "zz"}, `seed "zz" is not a 64-bit number`},
		{[]string{"replay", "-file", "/nonexistent/replay.txt"}, "cannot read replay file"},
		{[]string{"replay", "-pkg", "./scenarios/oc", "-test", "TestOC2_SharedReadEndingOverAgedOpenSet", "-seed", "1", "-mutant", "no-such-mutant"}, `no mutant "no-such-mutant" in the catalogue`},
		{[]string{"shrink", "-pkg", "./scenarios/oc", "-test", "TestX", "-seed", "1", "-attempts", "0"}, "-attempts must be at least 1"},
	} {
		out, rc := runAudit(t, c.args...)
		assert.Equal(t, 2, rc, "%v: %s", c.args, out)
		assert.Contains(t, out, c.want, "%v", c.args)
	}
	if testing.Short() {
		return
	}
	out, rc := runAudit(t, "shrink", "-pkg", "./scenarios/oc", "-test", "TestOC2_SharedReadEndingOverAgedOpenSet", "-seed", "0x503cb0b683b7a4ed", "-out", t.TempDir())
	assert.Equal(t, 1, rc, out)
	assert.Contains(t, out, "audit shrink: the run passed: there is no failure to shrink")
	out, rc = runAudit(t, "replay", "-pkg", "./scenarios/oc", "-test", "TestNoSuchTest", "-seed", "1", "-out", t.TempDir())
	assert.Equal(t, 2, rc, out)
	assert.Contains(t, out, "no test in ./scenarios/oc matches ^TestNoSuchTest$/^seed=0x1$")
}

// Package scripts_test tests the project's shell scripts.
package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMake stands in for make: it appends "start <stage>" and "end
// <stage>" to a journal, writes a line to stdout and one to stderr, and
// fails the stage named by $FAIL. With $SPIN set, the last stage and bg2
// spin for 1 s of CPU, and fg2 ends only after bg2 (and so the background stages)
// has. fg1 and bg1
// each end only once the other has started (or 10 s have passed), so the
// journal shows whether the two overlap whatever the machine's load.
const fakeMake = `#!/usr/bin/env bash
stage=$2
echo "start $stage" >>"$JOURNAL"
case $stage in
fg1) other=bg1 ;;
bg1) other=fg1 ;;
*) other= ;;
esac
if [ -n "$other" ]; then
	for _ in $(seq 100); do grep -q "start $other" "$JOURNAL" && break; sleep 0.1; done
fi
if [ "$stage" = fg2 ] && [ -n "${SPIN:-}" ]; then
	# Builtins only, but for sleep: fg2's own CPU is to stay small.
	for _ in $(seq 100); do
		ended=
		while read -r l; do [ "$l" = "end bg2" ] && ended=1; done <"$JOURNAL"
		[ -n "$ended" ] && break
		sleep 0.2
	done
	sleep 0.2
fi
echo "output of $stage"
echo "stderr of $stage" >&2
if [ -n "${SPIN:-}" ]; then
	# Spin until this subshell has used 1 s of CPU (times: its own user
	# time, written to a file: a command substitution would fork and time
	# itself), however long the machine's load makes that take; 60 s at most.
	case $stage in last | bg2) (
		while [ "$SECONDS" -lt 60 ]; do
			for _ in {1..20000}; do :; done
			times >"$JOURNAL.$stage.times"
			read -r u _ <"$JOURNAL.$stage.times"
			u=${u%s} && u=${u#*m} && [ "${u%.*}" -ge 1 ] && break
		done
	) ;; esac
fi
sleep 0.1
echo "end $stage" >>"$JOURNAL"
[ "$stage" != "${FAIL:-}" ]
`

func runStages(t *testing.T, fail string, env ...string) (output string, journal []string, err error) {
	t.Helper()
	dir := t.TempDir()
	mk := filepath.Join(dir, "make")
	require.NoError(t, os.WriteFile(mk, []byte(fakeMake), 0o755))
	cmd := exec.Command("./test-stages.sh", mk, filepath.Join(dir, "out"), "first", "bg1 bg2", "fg1 fg2", "last")
	cmd.Env = append(append(os.Environ(), "JOURNAL="+filepath.Join(dir, "journal"), "FAIL="+fail), env...)
	b, err := cmd.CombinedOutput()
	j, _ := os.ReadFile(filepath.Join(dir, "journal"))
	return string(b), strings.Fields(strings.ReplaceAll(string(j), "\n", " ")), err
}

// pairs turns the journal's words back into "start x" / "end x" entries.
func pairs(words []string) []string {
	var out []string
	for i := 0; i+1 < len(words); i += 2 {
		out = append(out, words[i]+" "+words[i+1])
	}
	return out
}

// The first stage runs alone before every other, the background stages
// run while the foreground ones do, the last stage starts only after every
// other stage has ended, and each background stage's output is printed in
// the end.
func TestStagesOverlapAndTheFirstAndLastRunAlone(t *testing.T) {
	out, words, err := runStages(t, "")
	require.NoError(t, err, out)
	j := pairs(words)
	require.Len(t, j, 12, "%v", j)
	assert.Equal(t, []string{"start first", "end first"}, j[:2], "the first stage runs alone, before all the others: %v", j)
	assert.Equal(t, []string{"start last", "end last"}, j[10:], "the last stage runs alone, after all the others: %v", j)
	at := func(e string) int { return indexOf(j, e) }
	assert.Less(t, at("start bg1"), at("end fg1"), "the first background stage runs alongside the first foreground one: %v", j)
	assert.Less(t, at("start fg1"), at("end bg1"), "the first background stage runs alongside the first foreground one: %v", j)
	assert.Less(t, at("end bg1"), at("start bg2"), "background stages run one after another: %v", j)
	assert.Less(t, at("end fg1"), at("start fg2"), "foreground stages run one after another: %v", j)
	for _, s := range []string{"bg1", "bg2"} {
		assert.Contains(t, out, "==== "+s+" (ran in the background")
		assert.Contains(t, out, "output of "+s)
	}
	assert.Regexp(t, `test-stages: first +passed +[0-9.]+s`, out)
	assert.Regexp(t, `test-stages: last +passed +[0-9.]+s`, out)
	assert.Contains(t, out, "test-stages: every stage passed")
}

// The table gives each stage's CPU time beside its wall time, and their sum:
// the second of CPU that last and bg2 spin for shows there, while the stages
// that mostly sleep show less than half of it, fg2 too, although the
// background stages ended (and their processes were reaped) while it ran;
// and measuring does not swallow a stage's stderr. (Spinning for CPU time,
// not wall time, keeps the figures apart however loaded the machine is.)
func TestStagesReportTheirCPUTime(t *testing.T) {
	out, _, err := runStages(t, "", "SPIN=1")
	require.NoError(t, err, out)
	cpu := func(stage string) float64 {
		m := regexp.MustCompile(`test-stages: ` + regexp.QuoteMeta(stage) + ` +(?:passed)? +(?:[0-9.]+s)? +([0-9.]+)s\n`).FindStringSubmatch(out)
		require.NotNil(t, m, "no CPU figure for %s in:\n%s", stage, out)
		f, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return f
	}
	sum := 0.0
	for _, s := range []string{"first", "fg1", "fg2", "bg1", "bg2", "last"} {
		sum += cpu(s)
		if s == "last" || s == "bg2" {
			assert.GreaterOrEqual(t, cpu(s), 1.0, "%s spun for 1 s of CPU:\n%s", s, out)
		} else {
			assert.Less(t, cpu(s), 0.5, "%s spun no more than a sleeper:\n%s", s, out)
		}
	}
	assert.InDelta(t, sum, cpu("(all stages)"), 0.35, "the total is the sum of the stages' CPU, give or take their rounding:\n%s", out)
	for _, s := range []string{"first", "fg1", "last"} {
		assert.Contains(t, out, "stderr of "+s)
	}
}

// A failing stage fails the run and stops every later stage that has not
// started, in the foreground or the last group.
func TestAFailingStageStopsTheRun(t *testing.T) {
	for _, c := range []struct {
		fail   string
		notRun []string
		ran    []string
	}{
		{"first", []string{"bg1", "bg2", "fg1", "fg2", "last"}, nil},
		{"fg1", []string{"fg2", "last"}, []string{"bg1", "bg2"}},
		{"bg1", []string{"bg2", "last"}, []string{"fg1", "fg2"}},
		{"last", nil, []string{"bg1", "bg2", "fg1", "fg2"}},
	} {
		t.Run(c.fail, func(t *testing.T) {
			out, words, err := runStages(t, c.fail)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, out)
			assert.Equal(t, 1, exit.ExitCode())
			j := pairs(words)
			assert.Contains(t, j, "end "+c.fail)
			assert.Regexp(t, `test-stages: `+c.fail+` +FAILED`, out)
			assert.Contains(t, out, "test-stages: FAILED: "+c.fail)
			for _, s := range c.notRun {
				assert.NotContains(t, j, "start "+s, "%s runs after a failure: %v", s, j)
				assert.Regexp(t, `test-stages: `+s+` +not run`, out)
			}
			for _, s := range c.ran {
				assert.Contains(t, j, "end "+s, "%v", j)
			}
		})
	}
}

func TestStagesNeedTheirArguments(t *testing.T) {
	b, err := exec.Command("./test-stages.sh", "make").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(b), "usage: scripts/test-stages.sh")
}

func indexOf(s []string, e string) int {
	for i, x := range s {
		if x == e {
			return i
		}
	}
	return -1
}

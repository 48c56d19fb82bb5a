package audit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// TestTheClaimPhaseJoinsItsPartsInOrder runs two fixture packages, the
// first slower than the second, with one process and with two at once, and
// one check declared timed. Both give the same records, byte for byte, in
// the packages' order with each package's timed check after its untimed
// ones; with two processes the packages did overlap (so the join, not the
// end order, made the order), and the timed check ended before any other
// check began.
func TestTheClaimPhaseJoinsItsPartsInOrder(t *testing.T) {
	t.Parallel() // its own processes and directories: beside the others, not after them
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const slow, fast = "./scenarios/audit/testdata/order/slow", "./scenarios/audit/testdata/order/fast"
	files := map[int][]byte{}
	for _, procs := range []int{1, 2} {
		orderLog := filepath.Join(t.TempDir(), "order.log")
		r := Runner{Root: root, Out: t.TempDir(), Bin: prebuiltFixtures(t), Pkgs: []string{slow, fast}, Log: io.Discard, Timeout: 5 * time.Minute,
			ClaimProcs: procs, Timed: map[string][]string{fast: {"TestFastTimed"}}, Env: map[string]string{"WINDTUNNEL_ORDER_LOG": orderLog}}
		recs, failed, err := r.RunClaims(context.Background(), "^Test", 0)
		require.NoError(t, err)
		assert.Empty(t, failed)
		var ids []string
		for _, rec := range recs {
			ids = append(ids, rec.ID)
		}
		assert.Equal(t, []string{"FX-1", "FX-2", "FX-3", "FX-4"}, ids, "%d processes", procs)
		files[procs], err = os.ReadFile(filepath.Join(r.Out, "claims", "claims.jsonl"))
		require.NoError(t, err)

		spans := readOrderLog(t, orderLog)
		require.Len(t, spans, 4)
		assertTimedAlone(t, spans, "TestFastTimed", fmt.Sprintf("%d processes", procs))
		if procs == 2 {
			assert.Less(t, spans["TestFastUntimed"][1], spans["TestSlowSecond"][1],
				"with two processes the second package's check must end before the first package's last")
		}
	}
	assert.Equal(t, string(files[1]), string(files[2]), "claims.jsonl with one process and with two")
}

// assertTimedAlone asserts that the timed test ended before any other
// test of spans began.
func assertTimedAlone(t *testing.T, spans map[string][2]int64, timedName, what string) {
	t.Helper()
	timed, ok := spans[timedName]
	require.True(t, ok, "%s: the timed check %s left no span", what, timedName)
	for name, s := range spans { //windtunnel:unordered every span is compared with the timed one
		if name != timedName {
			assert.Less(t, timed[1], s[0], "%s: %s began before the timed check ended", what, name)
		}
	}
}

// TestTheAuditRunsClaimsAndMutantsInOneBudget runs an audit (RunAudit)
// of two fixture packages and one mutant with two processes at once.
// The check of the package meet ends only once the mutant's run has left
// its mark, so it passes only if the mutant ran while a claim check was
// still running: one budget, not a mutant phase after the claim phase. The
// timed check still ran alone, before everything else, and the records
// come in the packages' order.
func TestTheAuditRunsClaimsAndMutantsInOneBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const fast, meet = "./scenarios/audit/testdata/order/fast", "./scenarios/audit/testdata/order/meet"
	marks, orderLog := t.TempDir(), filepath.Join(t.TempDir(), "order.log")
	t.Setenv("FAILFAST_MARKS", marks)
	t.Setenv("WINDTUNNEL_MEET_MARK", filepath.Join(marks, "small"))
	t.Setenv("WINDTUNNEL_ORDER_LOG", orderLog)
	m := failfastMutant()
	var log bytes.Buffer
	r := Runner{Root: root, Out: t.TempDir(), Bin: prebuiltFixtures(t), Pkgs: []string{fast, meet}, Log: &log, Timeout: 5 * time.Minute,
		ClaimProcs: 2, Timed: map[string][]string{fast: {"TestFastTimed"}}}
	recs, failed, results, err := r.RunAudit(context.Background(), "^Test", 0, &MutantPhase{Mutants: []mutants.Mutant{m}, Seeds: 1, Schemata: true})
	require.NoError(t, err)
	assert.Empty(t, failed, "the claim checks, meet's among them, pass: %s", log.String())
	var ids []string
	for _, rec := range recs {
		ids = append(ids, rec.ID)
	}
	assert.Equal(t, []string{"FX-3", "FX-4", "FX-5"}, ids, "fast's untimed and timed checks, then meet's")
	require.Len(t, results, 1)
	assert.True(t, results[0].Caught, "%+v", results[0])
	assert.Empty(t, results[0].Error)
	assertTimedAlone(t, readOrderLog(t, orderLog), "TestFastTimed", "RunAudit")
	assert.Contains(t, log.String(), "[mutant 1/1] fixture-broken")
}

// readOrderLog reads the fixtures' "name start end" lines.
func readOrderLog(t *testing.T, path string) map[string][2]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string][2]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		require.Len(t, f, 3, "%q", l)
		a, err1 := strconv.ParseInt(f[1], 10, 64)
		b, err2 := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		out[f[0]] = [2]int64{a, b}
	}
	return out
}

package audit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// TestAnInconclusiveClaimFailsTheAudit: a record whose check ran too few
// seeds to judge its claim outranks a record that holds, yields to one
// that is violated, and an inconclusive claim is always a problem, shown
// as such in the table.
func TestAnInconclusiveClaimFailsTheAudit(t *testing.T) {
	cs := []claims.Claim{{ID: "OC-1", Text: "union"}, {ID: "OC-6", Text: "debt"}, {ID: "OC-9", Text: "metrics"}}
	recs := []findings.Record{
		{ID: "OC-1", Test: "TestOC1_A", Verdict: findings.Holds, Measured: "0 wrong", Seeds: 20},
		{ID: "OC-1", Test: "TestOC1_B", Verdict: findings.Inconclusive, Measured: "2 reaches", Seeds: 5, Note: "inconclusive: probe p reached 2 times in 5 seeds"},
		{ID: "OC-6", Test: "TestOC6_A", Verdict: findings.KnownDeviation, Measured: "found", Seeds: 20},
		{ID: "OC-6", Test: "TestOC6_B", Verdict: findings.Inconclusive, Measured: "not found", Seeds: 5},
		{ID: "OC-9", Test: "TestOC9_A", Verdict: findings.Inconclusive, Measured: "2 reaches", Seeds: 5},
		{ID: "OC-9", Test: "TestOC9_B", Verdict: findings.Violated, Measured: "1 wrong", Seeds: 5},
	}
	got := Merge(cs, recs)
	require.Len(t, got, 3)
	assert.Equal(t, findings.Inconclusive, got[0].Verdict, "over holds")
	assert.Equal(t, findings.Inconclusive, got[1].Verdict, "over a documented deviation")
	assert.Equal(t, findings.Violated, got[2].Verdict, "under violated")

	rep := &Report{Claims: got}
	Judge(rep)
	require.Len(t, rep.Problems, 3, "%v", rep.Problems)
	assert.Contains(t, rep.Problems[0], "OC-1: verdict inconclusive, expected holds")
	assert.Contains(t, rep.Problems[1], "OC-6: verdict inconclusive, expected known-deviation")
	assert.Contains(t, rep.Problems[2], "OC-9: verdict violated, expected holds")

	var table bytes.Buffer
	require.NoError(t, WriteTable(&table, rep))
	assert.Contains(t, table.String(), "inconclusive (expected holds)")
	assert.NotContains(t, table.String(), "audit: every claim has its expected verdict")

	// Records that all hold are no problem: the inconclusive one above is.
	held := Merge(cs[:1], recs[:1])
	rep = &Report{Claims: held}
	Judge(rep)
	assert.Empty(t, rep.Problems)
	assert.Equal(t, findings.Holds, held[0].Verdict)
}

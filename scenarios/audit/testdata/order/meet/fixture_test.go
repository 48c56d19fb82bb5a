// Package meet is a claim phase fixture for the audit's runner: its check
// ends only once a mutant's run has left its mark (the file
// $WINDTUNNEL_MEET_MARK), so it passes only if the audit runs a mutant
// while this claim check is still running
// (TestTheAuditRunsClaimsAndMutantsInOneBudget). Without the variable it
// waits for nothing.
package meet

import (
	"os"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit/testdata/order/orderlog"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// waitLimit bounds the wait: a mutant's overlay build on a loaded machine
// takes seconds, not minutes.
const waitLimit = 2 * time.Minute

func TestMeetsAMutant(t *testing.T) {
	defer orderlog.Span(t)()
	if mark := os.Getenv("WINDTUNNEL_MEET_MARK"); mark != "" {
		deadline := time.Now().Add(waitLimit)
		for {
			if _, err := os.Stat(mark); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no mutant left %s within %v: the mutants did not run beside this claim check", mark, waitLimit)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	findings.Report(t, findings.Record{ID: "FX-5", Verdict: findings.Holds, Measured: "met", Bound: "-", Seeds: 1})
}

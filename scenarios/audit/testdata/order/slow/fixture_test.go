// Package slow is a claim phase fixture for the audit's runner: the first
// package of the run, and the slower one, so that with two processes at once
// the package after it ends first (TestTheClaimPhaseJoinsItsPartsInOrder).
package slow

import (
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit/testdata/order/orderlog"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

func TestSlowFirst(t *testing.T) {
	defer orderlog.Span(t)()
	time.Sleep(300 * time.Millisecond)
	findings.Report(t, findings.Record{ID: "FX-1", Verdict: findings.Holds, Measured: "first", Bound: "-", Seeds: 1})
}

func TestSlowSecond(t *testing.T) {
	defer orderlog.Span(t)()
	time.Sleep(300 * time.Millisecond)
	findings.Report(t, findings.Record{ID: "FX-2", Verdict: findings.Holds, Measured: "second", Bound: "-", Seeds: 1})
}

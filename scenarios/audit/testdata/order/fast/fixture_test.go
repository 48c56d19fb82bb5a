// Package fast is a claim phase fixture for the audit's runner: the second
// package of the run, quick, with one check the test declares timed.
package fast

import (
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/audit/testdata/order/orderlog"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

func TestFastTimed(t *testing.T) {
	defer orderlog.Span(t)()
	findings.Report(t, findings.Record{ID: "FX-4", Verdict: findings.Holds, Measured: "timed", Bound: "-", Seeds: 1})
}

func TestFastUntimed(t *testing.T) {
	defer orderlog.Span(t)()
	findings.Report(t, findings.Record{ID: "FX-3", Verdict: findings.Holds, Measured: "untimed", Bound: "-", Seeds: 1})
}

// Package fast is a claim phase fixture for the audit's runner: the second
// package of the run, quick, with one check the test declares timed.
package fast

import (
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/audit/testdata/order/orderlog"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

func TestFastTimed(t *testing.T) {
	defer orderlog.Span(t)()
	claims.Report(t, claims.Record{ID: "FX-4", Verdict: claims.Holds, Measured: "timed", Bound: "-", Seeds: 1})
}

func TestFastUntimed(t *testing.T) {
	defer orderlog.Span(t)()
	claims.Report(t, claims.Record{ID: "FX-3", Verdict: claims.Holds, Measured: "untimed", Bound: "-", Seeds: 1})
}

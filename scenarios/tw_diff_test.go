package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestTW1_WheelNeverLater checks TW-1 in the swarm world: after every
// operation (on the connection it touched), after every pass that fired
// (on every connection) and at random instants (every connection, under
// the handler's lock), a live deadline is held by the wheel at that
// deadline or earlier. Activity pushes real deadlines later without
// touching the wheel; the measured figure is how much earlier the wheel
// got to hold a deadline than the real one.
func TestTW1_WheelNeverLater(t *testing.T) {
	sum, agg := worldTest(t, twSeeds(30), nil, "TW-1")
	claims.Report(t, claims.Record{
		ID: "TW-1", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("wheel deadline <= real deadline in %d connection checks (%d whole-thread checks); the wheel held a deadline up to %s earlier than the real one (allowed)",
			agg.st.ConnChecks, agg.st.FullChecks, secs(agg.early.Value)),
		Bound: "wheel deadline <= real deadline for every live connection, after every step", Value: agg.early.Value, Unit: "s", Seeds: sum.Seeds,
		Witness: agg.early.Witness,
		Note:    agg.summary(),
	})
}

// TestTW2_SameAsFullScan checks TW-2 in the swarm world: every operation is
// mirrored into the full-scan reference cop at the same instant, which
// passes at every tick and restart. The wheel cop must fire exactly the
// reference's timeouts (connection, kind, deadline), never at or before the
// deadline, and at the reference's pass or within its budget continuations;
// after the drain nothing may stay armed. Aligned threads put deadlines
// exactly on ticks, where "passed" must mean strictly after.
func TestTW2_SameAsFullScan(t *testing.T) {
	sum, agg := worldTest(t, twSeeds(30), nil, "TW-2")
	claims.Report(t, claims.Record{
		ID: "TW-2", Verdict: claims.Verdict(sum.Failures == 0 && agg.st.Timeouts > 0 && agg.st.Aligned > 0),
		Measured: fmt.Sprintf("%d timeouts identical to the full scan's (%d with the deadline exactly on a tick, %d longer than the ring, %d fired by a catch-up); on the grid at most %s after the deadline; at most %.0f ms after the full scan's pass (continuations); never early (smallest margin %v)",
			agg.st.Timeouts, agg.st.Aligned, agg.st.Long, agg.st.Paused, secs(agg.late.Value), agg.lag.Value, time.Duration(-agg.margin.Value*float64(time.Millisecond))),
		Bound: "same timeouts as the full scan; deadline < firing <= first tick after it + budget continuations", Value: agg.late.Value, Unit: "s", Seeds: sum.Seeds,
		Witness: agg.lag.Witness,
		Note:    agg.summary() + "; the witness is the latest firing relative to the full scan's pass",
	})
}

package main

import (
	"fmt"
	"io"
	"time"
)

// notFlown is a cell with no measurement behind it.
const notFlown = "not flown"

// comparison prints the real servers' distributions beside the simulated
// flight's, one row per quantity, each cell the quantiles of what was
// measured (real is nil when only the simulator flew).
func comparison(w io.Writer, real *Result, sf simFlight) {
	var calm, churn, whole distributions
	if real != nil {
		calm, churn, whole = real.Calm, real.ChurnDist, real.Dist
	}
	cell := func(ns []int64) string {
		if len(ns) == 0 {
			return notFlown
		}
		return quantileRow(ns)
	}
	errs := func(d distributions, ran bool) string {
		if !ran {
			return notFlown
		}
		return fmt.Sprintf("%d of %d", d.StatementErrs, len(d.Statements))
	}
	fmt.Fprintln(w, "| quantity | real servers | simulated (sim/simdb model, same seed and schedule) |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, row := range [][3]string{
		{"pool wait (Acquire → checkout), no fault", cell(calm.AcquireWaits), cell(sf.Calm.AcquireWaits)},
		{"statement (issue → return), no fault", cell(calm.Statements), cell(sf.Calm.Statements)},
		{"snapshot lag (send → statement start), no fault", cell(whole.ToStart), cell(sf.Calm.ToStart)},
		{"pool wait, churn with faults", cell(churn.AcquireWaits), cell(sf.Churn.AcquireWaits)},
		{"pool waits over 1ms (queued behind busy connections), churn", queued(churn.AcquireWaits, real != nil), queued(sf.Churn.AcquireWaits, true)},
		{"statement, churn with faults", cell(churn.Statements), cell(sf.Churn.Statements)},
		{"statement errors, churn with faults", errs(churn, len(churn.Statements) > 0), errs(sf.Churn, len(sf.Churn.Statements) > 0)},
		{"connections opened, no fault / churn", opened(calm, churn, real != nil), opened(sf.Calm, sf.Churn, true)},
		{"Acquire calls that failed (call → error), churn", cell(churn.AcquireErrs), cell(sf.Churn.AcquireErrs)},
	} {
		fmt.Fprintf(w, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	fmt.Fprintf(w, "simulated churn faults applied: %s\n", countsOr(sf.Faults))
}

// queuedOver separates a checkout that queued behind the pool's busy
// connections, which waits for a statement, from the pool's own
// bookkeeping, which takes microseconds.
const queuedOver = time.Millisecond

// queued is the distribution of the waits over queuedOver: the starved
// pools' queueing, apart from how many checkouts did not queue at all.
func queued(ns []int64, ran bool) string {
	if !ran {
		return notFlown
	}
	var long []int64
	for _, n := range ns {
		if n > int64(queuedOver) {
			long = append(long, n)
		}
	}
	return fmt.Sprintf("%s; %d of %d checkouts", quantileRow(long), len(long), len(ns))
}

// opened is what the pools spent on their connections in each phase.
func opened(calm, churn distributions, ran bool) string {
	if !ran {
		return notFlown
	}
	mean := func(d distributions) string {
		if d.Connects == 0 {
			return "-"
		}
		return (d.ConnectTime / time.Duration(d.Connects)).String()
	}
	return fmt.Sprintf("%d / %d opened (%s / %s each on average), %d / %d idle ones pinged",
		calm.Connects, churn.Connects, mean(calm), mean(churn), calm.Pings, churn.Pings)
}

func countsOr(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return counts(m)
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// report prints a flight's verdicts and what it measured.
func report(w io.Writer, r Result) {
	name := "production code"
	if r.Options.Mutant != "" {
		name = "mutant " + r.Options.Mutant
	}
	fmt.Fprintf(w, "flight seed %d, %s: %d relays, %d OC-2 rounds, %d 10 s rounds, %d reads, %d commits, %v\n",
		r.Options.Seed, name, r.Options.Relays, r.Options.Rounds, r.Options.Long, r.Reads, r.Commits, r.Wall.Round(time.Millisecond))
	fmt.Fprintf(w, "clock: %s\n", r.U.Clock)
	fmt.Fprintf(w, "commit: visible within [At, Acked]; max Acked − At %v; %s\n", r.U.Commit, commitSpread(r.CommitLog))
	fmt.Fprintln(w, "| claim | measured | reads | worst | worst less its commit's uncertainty | bound | + fill + U | verdict at | tight | verdict | cross-check |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, v := range r.Verdicts {
		verdict := "holds"
		if !v.Holds {
			verdict = "VIOLATED: " + v.Witness
		}
		fmt.Fprintf(w, "| %s | %s | %d | %v | %v | %s | %v | < %v | %.4f | %s | %s at Δ %v |\n",
			v.Claim, v.What, v.Reads, v.Worst, v.Adjusted, v.b, v.Fill+v.U, v.Limit(), v.Tight, verdict, v.Cross, v.Delta)
	}
	if r.Cross.Reads > 0 {
		verdict := "holds"
		if r.Cross.Grants > 0 {
			verdict = "VIOLATED"
		}
		fmt.Fprintf(w, "| OC-10 | channels asked under another community | %d | %d grants | | = 0 | | | | %s | |\n", r.Cross.Reads, r.Cross.Grants, verdict)
	}
	if l := r.Lin; l != nil {
		fmt.Fprintf(w, "| MS-3 | one relay, reliable invalidation: porcupine on %d ops (%d writes), each widened by U = %v | %d | %s | | linearizable | | | | %s | |\n",
			l.Ops, l.Writes, l.Widen, l.Ops, l.Verdict, map[bool]string{true: "holds", false: "VIOLATED: keys " + strings.Join(l.Keys, ", ")}[l.Verdict == "Ok"])
	}
	if d := r.Calm; len(d.Statements) > 0 {
		fmt.Fprintf(w, "real servers, no fault: pool waits %s; statements %s\n", quantileRow(d.AcquireWaits), quantileRow(d.Statements))
	}
	if d := r.Dist; len(d.Statements) > 0 {
		fmt.Fprintf(w, "real servers, whole flight (faults included): pool waits %s; statements %s; statement errors %d; resubscriptions %d\n",
			quantileRow(d.AcquireWaits), quantileRow(d.Statements), d.StatementErrs, d.Resubscriptions)
		fmt.Fprintf(w, "real servers: send → statement start %s; statement start → reply %s\n", quantileRow(d.ToStart), quantileRow(d.FromStart))
		fmt.Fprintf(w, "simulated model (sim/simdb defaults): %s\n", simulatedModel())
	}
	if len(r.Gaps) > 0 {
		q := quantiles(r.Gaps, 0, 0.5, 1)
		fmt.Fprintf(w, "race gaps (revocation commit − racing read's invocation): min %v, median %v, max %v over %d races\n", q[0], q[1], q[2], len(r.Gaps))
	}
	if len(r.Faults) > 0 {
		fmt.Fprintf(w, "churn faults applied: %s\n", counts(r.Faults))
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "errors (not judged): %s\n", counts(r.Errors))
	}
}

// mutantVerdict says whether a mutant's flight broke one of the claims it
// mutates: caught means a verdict of one of its claims is violated.
func mutantVerdict(id string, r Result) (bool, string) {
	m, _ := findMutant(id)
	for _, v := range r.Verdicts {
		if !v.Holds && slices.Contains(m.Claims, v.Claim) {
			return true, fmt.Sprintf("mutant %s caught by %s: worst %v, less its commit's uncertainty %v ≥ %v (%s)", id, v.Claim, v.Worst, v.Adjusted, v.Limit(), v.Witness)
		}
	}
	if r.Cross.Grants > 0 && slices.Contains(m.Claims, "OC-10") {
		return true, fmt.Sprintf("mutant %s caught by OC-10: %d cross-community grants", id, r.Cross.Grants)
	}
	if r.Lin != nil && r.Lin.Verdict == "Illegal" && slices.Contains(m.Claims, "MS-3") {
		return true, fmt.Sprintf("mutant %s caught by MS-3: not linearizable on keys %v", id, r.Lin.Keys)
	}
	return false, fmt.Sprintf("mutant %s SURVIVED the flight (claims %v)", id, m.Claims)
}

// commitSpread describes where the commits' uncertainty comes from: the
// time from the log row's instant to sending COMMIT, and COMMIT's round trip.
func commitSpread(cs []flightCommit) string {
	var toSend, rtt []int64
	for _, c := range cs {
		toSend = append(toSend, c.Sent-c.At)
		rtt = append(rtt, c.Acked-c.Sent)
	}
	a, b := quantiles(toSend, 0.5, 1), quantiles(rtt, 0.5, 1)
	return fmt.Sprintf("At→COMMIT sent median %v max %v, COMMIT round trip median %v max %v", a[0], a[1], b[0], b[1])
}

// counts is "a: 1, b: 2" in key order.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

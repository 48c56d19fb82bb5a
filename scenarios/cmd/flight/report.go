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
	fmt.Fprintf(w, "flight seed %d, %s: %d relays, %d rounds, %d reads, %d commits, %v\n",
		r.Options.Seed, name, r.Options.Relays, r.Options.Rounds, r.Reads, r.Commits, r.Wall.Round(time.Millisecond))
	fmt.Fprintf(w, "clock: %s\n", r.U.Clock)
	fmt.Fprintf(w, "commit: visible within [At, Acked]; max Acked − At %v; %s\n", r.U.Commit, commitSpread(r.CommitLog))
	fmt.Fprintln(w, "| claim | measured | reads | worst | bound | + U | verdict at | tight | verdict | cross-check |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, v := range r.Verdicts {
		verdict := "holds"
		if !v.Holds {
			verdict = "VIOLATED: " + v.Witness
		}
		fmt.Fprintf(w, "| %s | %s | %d | %v | %s | %v | < %v | %.4f | %s | %s |\n",
			v.Claim, v.What, v.Reads, v.Worst, v.b, v.U, v.Limit(), v.Tight, verdict, v.Cross)
	}
	if len(r.Gaps) > 0 {
		q := quantiles(r.Gaps, 0, 0.5, 1)
		fmt.Fprintf(w, "race gaps (revocation commit − racing read's invocation): min %v, median %v, max %v over %d races\n", q[0], q[1], q[2], len(r.Gaps))
	}
	if len(r.Errors) > 0 {
		keys := make([]string, 0, len(r.Errors))
		for k := range r.Errors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.Errors[k]))
		}
		fmt.Fprintf(w, "errors (not judged): %s\n", strings.Join(parts, ", "))
	}
}

// mutantVerdict says whether a mutant's flight broke one of the claims it
// mutates: caught means a verdict of one of its claims is violated.
func mutantVerdict(id string, r Result) (bool, string) {
	m, _ := findMutant(id)
	for _, v := range r.Verdicts {
		if !v.Holds && slices.Contains(m.Claims, v.Claim) {
			return true, fmt.Sprintf("mutant %s caught by %s: worst %v ≥ %v (%s)", id, v.Claim, v.Worst, v.Limit(), v.Witness)
		}
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

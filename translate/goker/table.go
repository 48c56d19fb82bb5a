package goker

import (
	"fmt"
	"strconv"
	"strings"
)

// Row is everything one run of the set measured for one kernel.
type Row struct {
	Kernel Kernel
	Rates  map[string]Rate // by strategy; empty when it did not translate
	// Long are the strategies flown again with a larger budget, when no
	// strategy proved the leak within the default one and the budget, not a
	// clean end, stopped some of their runs.
	Long   map[string]Rate
	Real   *Real   // nil when the real runtime was not run
	Shrunk *Shrunk // the shrink of its first found seed, nil when none
	// ShrinkErr says why a found kernel has no shrink.
	ShrinkErr string
}

// LongerFlights are the strategies to fly again with a larger budget: none
// when some strategy proved the leak; else each some of whose runs the
// budget stopped (the step limit, or a settle phase cut off while tasks
// still ran). A strategy whose runs ended cleanly, or that the wall cut off,
// is not asked again: more steps would not change the one, and would take
// longer still for the other.
func (r Row) LongerFlights(strats []string) []string {
	if _, found := r.Best(strats); found {
		return nil
	}
	var again []string
	for _, st := range strats {
		if x, has := r.Rates[st]; has && !x.CutOff && x.Limits+x.Possible > 0 {
			again = append(again, st)
		}
	}
	return again
}

// rate is strategy st's rate: its flight with the larger budget when it
// had one, which ran the same seeds further.
func (r Row) rate(st string) (Rate, bool) {
	if x, has := r.Long[st]; has {
		return x, true
	}
	x, has := r.Rates[st]
	return x, has
}

// Best is the strategy with the highest rate of proved leaks (on a tie, the
// earliest first find, then the first listed), and false when no strategy
// proved one.
func (r Row) Best(strats []string) (Rate, bool) {
	var best Rate
	ok := false
	for _, st := range strats {
		x, has := r.rate(st)
		if !has || x.Leaks == 0 {
			continue
		}
		if !ok || x.Leaks*best.Seeds > best.Leaks*x.Seeds || (x.Leaks*best.Seeds == best.Leaks*x.Seeds && x.First < best.First) {
			best, ok = x, true
		}
	}
	return best, ok
}

// AtLeastReal reports whether windtunnel's best rate is at least the real
// runtime's (k/N against k'/N', compared as fractions); known is false when
// the real runtime was not measured.
func (r Row) AtLeastReal(strats []string) (atLeast, known bool) {
	if r.Real == nil || r.Real.Runs == 0 {
		return false, false
	}
	best, _ := r.Best(strats) // zero Rate when nothing was found: 0 >= k'/N' only when k' is 0
	if best.Seeds == 0 {
		return r.Real.Leaks == 0, true
	}
	return best.Leaks*r.Real.Runs >= r.Real.Leaks*best.Seeds, true
}

// Flaky reports whether the header publishes a rate below k/k.
func (k Kernel) Flaky() bool {
	num, den, ok := strings.Cut(k.Published, "/")
	if !ok {
		return false
	}
	a, err1 := strconv.Atoi(num)
	b, err2 := strconv.Atoi(den)
	return err1 == nil && err2 == nil && a < b
}

// FirstFinds is the fewest seeds any strategy needed to prove the leak
// and the runs the real runtime needed to show it (its runs plus one when
// it never did); ok is false when either side is not measured or
// windtunnel found nothing.
func (r Row) FirstFinds(strats []string) (wt, real int, ok bool) {
	wt, found := r.firstFind(strats)
	if !found || r.Real == nil || r.Real.Runs == 0 {
		return 0, 0, false
	}
	real = r.Real.First
	if real == 0 {
		real = r.Real.Runs + 1
	}
	return wt, real, true
}

// LeakedPerRun compares, per run, the goroutines left leaked: the most any
// strategy left on average over its seeds (named by st) against the real
// runtime's average. A kernel that starts its bug in many copies shows it on
// both sides' first run; how many copies leak is then the finer measure of
// how often each copy shows it. cmp is -1, 0 or 1 as windtunnel's average is
// below, equal to or above the real one; ok is false when either side is not
// measured. A strategy with a proved leak of no count (a deadlock) has no
// average and is left out.
func (r Row) LeakedPerRun(strats []string) (wt, real float64, st string, cmp int, ok bool) {
	var best Rate
	for _, s := range strats {
		x, has := r.rate(s)
		if has && x.Seeds > 0 && x.Uncounted == 0 && (best.Seeds == 0 || x.Leaked*best.Seeds > best.Leaked*x.Seeds) {
			best = x
		}
	}
	if best.Seeds == 0 || r.Real == nil || r.Real.Runs == 0 {
		return 0, 0, "", 0, false
	}
	a, b := best.Leaked*r.Real.Runs, r.Real.Leaked*best.Seeds
	switch {
	case a < b:
		cmp = -1
	case a > b:
		cmp = 1
	}
	return float64(best.Leaked) / float64(best.Seeds), float64(r.Real.Leaked) / float64(r.Real.Runs), best.Strategy, cmp, true
}

// firstFind is the fewest seeds any strategy needed to prove the leak.
func (r Row) firstFind(strats []string) (int, bool) {
	first, ok := 0, false
	for _, st := range strats {
		if x, has := r.rate(st); has && x.First > 0 && (!ok || x.First < first) {
			first, ok = x.First, true
		}
	}
	return first, ok
}

func rateCell(x Rate, has bool) string {
	switch {
	case !has:
		return "not run"
	case x.CutOff:
		return "cut off (wall)"
	}
	c := fmt.Sprintf("%d/%d", x.Leaks, x.Seeds)
	if x.First > 0 {
		c += fmt.Sprintf(" (1st: %d)", x.First)
	}
	var also []string
	if x.Possible > 0 {
		also = append(also, fmt.Sprintf("%d possible", x.Possible))
	}
	if x.Limits > 0 {
		kind, _, _ := strings.Cut(x.Other, " ")
		if x.Possible > 0 {
			kind = "limit"
		}
		also = append(also, fmt.Sprintf("%d %s", x.Limits, kind))
	}
	if len(also) > 0 {
		c += " + " + strings.Join(also, ", ")
	}
	return c
}

func realCell(r *Real) string {
	switch {
	case r == nil:
		return "not run"
	case r.Hung:
		return fmt.Sprintf("hung at run %d", r.Runs+1)
	case r.First > 0:
		return fmt.Sprintf("%d/%d (1st: %d)", r.Leaks, r.Runs, r.First)
	}
	return fmt.Sprintf("%d/%d", r.Leaks, r.Runs)
}

// realRuns shows the real runtime's runs to its first find, "> N" when it
// never showed the leak in its N runs.
func realRuns(r *Real, n int) string {
	if r.First == 0 {
		return fmt.Sprintf("> %d", r.Runs)
	}
	return strconv.Itoa(n)
}

func yesNo(v, known bool) string {
	switch {
	case !known:
		return "—"
	case v:
		return "yes"
	}
	return "**no**"
}

// Table renders the rows as a markdown table, and a summary of what it
// shows against the goals: every found kernel at least as often as the real
// runtime, and the flaky ones in fewer runs.
func Table(strats []string, rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| kernel | translated | found | %s | real runtime | published | ≥ real | fewer runs | shrunk | replay |\n|---|---|---|", strings.Join(strats, " | "))
	b.WriteString(strings.Repeat("---|", len(strats)))
	b.WriteString("---|---|---|---|---|---|\n")
	var nTrans, nFound, nAtLeast, nKnown, nFlaky, nFewer, nTie, nShrunk, nReplays int
	var tieLeaked [3]int // ties by leaked goroutines per run: fewer, as many, more than real
	var notAtLeast, notFewer, foundLong []string
	for _, r := range rows {
		pub := r.Kernel.Published
		if pub == "" {
			pub = "—"
		}
		if len(r.Kernel.Issues) > 0 {
			fmt.Fprintf(&b, "| %s | no: %s |  |%s %s | %s | — | — |  |  |\n", r.Kernel.Name, r.Kernel.Issues[0], strings.Repeat("  |", len(strats)), realCell(r.Real), pub)
			continue
		}
		nTrans++
		var cells []string
		for _, st := range strats {
			x, has := r.Rates[st]
			c := rateCell(x, has)
			if l, long := r.Long[st]; long {
				c += fmt.Sprintf("; %s: %s", l.Budget, rateCell(l, true))
			}
			cells = append(cells, c)
		}
		best, found := r.Best(strats)
		foundCell, replay, shrunk := "no", "", ""
		if found {
			nFound++
			foundCell = "yes"
			if best.Budget != (Budget{}) {
				foundCell = "yes, " + best.Budget.String()
				foundLong = append(foundLong, r.Kernel.Name)
			}
			replay = fmt.Sprintf("`make goker-replay KERNEL=%s SEED=%s STRATEGY=%s%s`", r.Kernel.Name, best.Seed, best.Strategy, best.Budget.args())
		}
		switch {
		case r.Shrunk != nil:
			nShrunk++
			shrunk = fmt.Sprintf("%d → %d preemptions (%s, %d re-runs", r.Shrunk.Before, r.Shrunk.After, r.Shrunk.Strategy, r.Shrunk.Attempts)
			if r.Shrunk.Stopped != "" {
				shrunk += "; stopped: " + r.Shrunk.Stopped
			}
			shrunk += "); replay: "
			if r.Shrunk.Reproduces {
				nReplays++
				shrunk += "leaks again"
			} else {
				shrunk += "**does not reproduce**: " + r.Shrunk.Failure
			}
		case r.ShrinkErr != "":
			why, _, _ := strings.Cut(r.ShrinkErr, "\n") // a table cell holds one line; the log has the rest
			shrunk = "not shrunk: " + why
		}
		atLeast, known := r.AtLeastReal(strats)
		if known {
			nKnown++
			if atLeast {
				nAtLeast++
			} else {
				notAtLeast = append(notAtLeast, r.Kernel.Name)
			}
		}
		fewerCell := "—"
		if r.Kernel.Flaky() {
			nFlaky++
			wt, real, ok := r.FirstFinds(strats)
			switch {
			case !ok:
				notFewer = append(notFewer, r.Kernel.Name)
			case wt < real:
				nFewer++
				fewerCell = fmt.Sprintf("yes: %d vs %s", wt, realRuns(r.Real, real))
			case wt == real:
				nTie++
				fewerCell = fmt.Sprintf("tie: %d vs %d", wt, real)
				if a, b, st, cmp, ok := r.LeakedPerRun(strats); ok {
					tieLeaked[cmp+1]++
					fewerCell += fmt.Sprintf("; leaked per run %s (%s) vs %s", perRun(a), st, perRun(b))
				}
			default:
				notFewer = append(notFewer, r.Kernel.Name)
				fewerCell = fmt.Sprintf("**no**: %d vs %d", wt, real)
			}
		}
		fmt.Fprintf(&b, "| %s | yes | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Kernel.Name, foundCell, strings.Join(cells, " | "),
			realCell(r.Real), pub, yesNo(atLeast, known), fewerCell, shrunk, replay)
	}
	fmt.Fprintf(&b, "\n%d kernels, %d translated, %d found (a proved leak under some strategy)", len(rows), nTrans, nFound)
	if len(foundLong) > 0 {
		fmt.Fprintf(&b, "; only with the larger budget: %s", strings.Join(foundLong, ", "))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "At least the real runtime's rate: %d of the %d translated kernels measured on both", nAtLeast, nKnown)
	if len(notAtLeast) > 0 {
		fmt.Fprintf(&b, " (below it: %s)", strings.Join(notAtLeast, ", "))
	}
	fmt.Fprintf(&b, ".\nFlaky by their header (published rate below 100%%): %d translated; found in fewer runs than the real runtime: %d, in as many (both at the first run): %d", nFlaky, nFewer, nTie)
	if len(notFewer) > 0 {
		fmt.Fprintf(&b, "; in more, or not found: %s", strings.Join(notFewer, ", "))
	}
	if nTie > 0 {
		fmt.Fprintf(&b, ".\nOf those found as soon, windtunnel left more goroutines leaked per run than the real runtime in %d, as many in %d, fewer in %d", tieLeaked[2], tieLeaked[1], tieLeaked[0])
	}
	fmt.Fprintf(&b, ".\nShrunk: %d of the %d found; their shrunk replays proved the leak again: %d.\n", nShrunk, nFound, nReplays)
	return b.String()
}

// perRun shows a mean per run: whole numbers as they are, else to one
// decimal.
func perRun(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

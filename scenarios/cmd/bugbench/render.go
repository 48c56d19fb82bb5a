package main

import (
	"fmt"
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"math"
	"slices"
	"strings"
	"time"
)

// Markdown renders the report: a table per benchmarked mutant, the
// summary, and the logic mutants not benchmarked, with the reason.
func (r Report) Markdown() string {
	var b strings.Builder
	approaches := append(append([]string{}, Strategies...), Peers...)
	byMutant := map[string][]Attempt{}
	var order []string
	for _, a := range r.Attempts {
		if _, ok := byMutant[a.Mutant]; !ok {
			order = append(order, a.Mutant)
		}
		byMutant[a.Mutant] = append(byMutant[a.Mutant], a)
	}
	race := "stress under -race"
	if !r.Race {
		race = "stress without -race (a smoke run)"
	}
	fmt.Fprintf(&b, "Caps: %d seeds per strategy, %v of wall time per approach; PCT at depth %d; %s.\n\n", r.Caps.Seeds, r.Caps.Wall, r.Caps.pctDepth(), race)
	for _, m := range order {
		tg, _ := bugbench.Lookup(m)
		fmt.Fprintf(&b, "### %s\n\n%s's checker, workload %s.\n\n", m, tg.Workload.Claim, tg.Workload.Name)
		b.WriteString("| approach | caught | runs to catch | wall to catch | catching runs | first failure, or why it stopped |\n|---|---|---|---|---|---|\n")
		for _, a := range byMutant[m] {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %d of %d | %s |\n", a.Approach, yesNo(a.Caught), a.Runs, wall(a), a.Failing, a.Tried, cell(a))
		}
		b.WriteString("\n")
	}
	b.WriteString(r.Summary(approaches))
	if len(r.Skipped) > 0 {
		b.WriteString("\n### Not benchmarked\n\nThe catalogue's other logic mutants, by family, with what their checks fly. The list is not sorted into mutants whose failure hangs on an interleaving or on time and mutants that fail on any schedule (a parser's, a metric's).\n\n| family | mutants | reason |\n|---|---|---|\n")
		fams := map[string][]string{}
		var famOrder []string
		for _, t := range r.Skipped {
			fam := familyOf(t.Reason)
			if _, ok := fams[fam]; !ok {
				famOrder = append(famOrder, fam)
			}
			fams[fam] = append(fams[fam], t.Mutant)
		}
		for _, f := range famOrder {
			fmt.Fprintf(&b, "| %s | %d: %s | no workload on real goroutines yet: %s |\n", f, len(fams[f]), strings.Join(fams[f], ", "), familyWorld(f))
		}
	}
	return b.String()
}

// familyWorld says what a family's checks fly that keeps them off real
// goroutines: each world takes the run's *sim.Sim for its draws, clock,
// faults and probes.
func familyWorld(family string) string {
	switch family {
	case "oc", "ms":
		return "the family's checks fly relay worlds (scenarios/world/pods) on the simulated database and bus (simdb, simbus), which take the run's *sim.Sim"
	case "dr":
		return "the family's checks fly the collector world (scenarios/world/drain), whose lock-hold figures and injected records need the simulator's clock and steps"
	case "tw":
		return "the family's checks fly net threads (scenarios/world/netthreads) on the simulator's clock, against the full-scan reference at every tick"
	case "lf":
		return "the family's checks are parser and filter properties (rapid) and span programs flown on the simulator"
	}
	return "the family's checks fly a simulated world"
}

// familyOf is the claim family package a skipped target's reason names.
func familyOf(reason string) string {
	if i := strings.Index(reason, "./scenarios/"); i >= 0 {
		rest := reason[i+len("./scenarios/"):]
		if j := strings.IndexByte(rest, ' '); j >= 0 {
			return rest[:j]
		}
	}
	return "other"
}

// Summary is one row per approach: mutants caught, median and worst wall
// time to catch (a mutant not caught counts as past the cap), median runs
// to the first catch and per catch, and the ratio of the best peer's
// median time to this approach's.
func (r Report) Summary(approaches []string) string {
	var b strings.Builder
	n := r.mutants()
	fmt.Fprintf(&b, "### Summary over %d mutants\n\n", n)
	b.WriteString("| approach | caught | median wall to catch | worst wall to catch | median runs to catch | median runs per catch | median wall per catch | best peer's median ÷ this median: to catch, per catch |\n|---|---|---|---|---|---|---|---|\n")
	peer, peerPer := math.Inf(1), math.Inf(1)
	for _, p := range Peers {
		peer = min(peer, r.median(p, wallOf))
		peerPer = min(peerPer, r.median(p, wallPerCatch))
	}
	for _, ap := range approaches {
		caught := 0
		for _, a := range r.Attempts {
			if a.Approach == ap && a.Caught {
				caught++
			}
		}
		med, worst := r.median(ap, wallOf), r.worst(ap)
		per := r.median(ap, wallPerCatch)
		fmt.Fprintf(&b, "| %s | %d of %d | %s | %s | %s | %s | %s | %s, %s |\n", ap, caught, n, seconds(med, r.Caps.Wall), seconds(worst, r.Caps.Wall),
			count(r.median(ap, runsOf)), count(r.median(ap, perCatch)), seconds(per, r.Caps.Wall), ratio(peer, med, r.Caps.Wall), ratio(peerPer, per, r.Caps.Wall))
	}
	return b.String()
}

func (r Report) mutants() int {
	seen := map[string]bool{}
	for _, a := range r.Attempts {
		seen[a.Mutant] = true
	}
	return len(seen)
}

func wallOf(a Attempt) float64 { return a.Wall.Seconds() }
func runsOf(a Attempt) float64 { return float64(a.Runs) }

// perCatch is the runs an approach spent per catch over all its runs, the
// mean runs to catch that its rate implies: steadier than the first catch.
func perCatch(a Attempt) float64 { return float64(a.Tried) / float64(a.Failing) }

// wallPerCatch is the wall time an approach spent per catch.
func wallPerCatch(a Attempt) float64 { return a.Spent.Seconds() / float64(a.Failing) }

// median of f over the approach's attempts, +Inf for one that did not
// catch its mutant (past its cap).
func (r Report) median(ap string, f func(Attempt) float64) float64 {
	var xs []float64
	for _, a := range r.Attempts {
		if a.Approach != ap {
			continue
		}
		if a.Caught {
			xs = append(xs, f(a))
		} else {
			xs = append(xs, math.Inf(1))
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func (r Report) worst(ap string) float64 {
	w := math.NaN()
	for _, a := range r.Attempts {
		if a.Approach != ap {
			continue
		}
		x := math.Inf(1)
		if a.Caught {
			x = a.Wall.Seconds()
		}
		if math.IsNaN(w) || x > w {
			w = x
		}
	}
	return w
}

func seconds(x float64, cap time.Duration) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 1):
		return fmt.Sprintf("not caught (> %v)", cap)
	}
	return time.Duration(x * float64(time.Second)).Round(10 * time.Microsecond).String()
}

func count(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 1):
		return "not caught"
	}
	return fmt.Sprintf("%.4g", x)
}

// ratio is peer/med; a peer that did not catch counts at the cap, which
// makes the ratio a lower bound.
func ratio(peer, med float64, cap time.Duration) string {
	switch {
	case math.IsNaN(med) || math.IsInf(med, 1) || math.IsNaN(peer):
		return "–"
	case math.IsInf(peer, 1):
		return fmt.Sprintf("≥ %.0f× (peers past the cap)", cap.Seconds()/med)
	case med == 0:
		return "–"
	}
	return fmt.Sprintf("%.3g×", peer/med)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func wall(a Attempt) string {
	if !a.Caught {
		return fmt.Sprintf("> %v", a.Wall.Round(time.Millisecond))
	}
	return a.Wall.Round(10 * time.Microsecond).String()
}

// cell is the failure or the note, one table cell long.
func cell(a Attempt) string {
	s := a.Note
	if a.Caught {
		s = a.Failure
		if a.Note != "" {
			s = a.Note + ": " + s
		}
	}
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

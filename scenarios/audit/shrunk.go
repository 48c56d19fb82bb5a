package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim/shrink"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// readShrunk finds the shrink summary of a mutant's first failing seed
// under its artifacts: the one of the test that caught it when there are
// several (each failing subtest shrinks its own seed).
func readShrunk(artifacts, caughtBy string) *simtest.ShrinkSummary {
	var paths []string
	_ = filepath.WalkDir(artifacts, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, filepath.FromSlash(simtest.ShrinkFile)) {
			paths = append(paths, path)
		}
		return nil
	})
	sort.Strings(paths)
	var sums []simtest.ShrinkSummary
	for _, p := range paths {
		sum, err := simtest.ReadShrinkSummary(p)
		if err != nil {
			sum = simtest.ShrinkSummary{ShrinkFail: err.Error()}
		}
		sums = append(sums, sum)
	}
	if len(sums) == 0 {
		return nil
	}
	test, _, _ := strings.Cut(caughtBy, " ")
	for i := range sums {
		if test != "" && strings.HasPrefix(sums[i].Test, test) {
			return &sums[i]
		}
	}
	return &sums[0]
}

// The size a mutant's counterexample should shrink to: the shrinker's
// goal, which its MoreAttempts round works toward.
const (
	GoalOperations  = shrink.GoalOperations
	GoalPreemptions = shrink.GoalPreemptions
)

// ShrinkStats sums up the shrinks of an audit: how many counterexamples
// met the goal, and the median shrink time, computed from the results.
type ShrinkStats struct {
	Shrunk, Failed, MetGoal int
	Median                  time.Duration
	Missed                  []string // mutants whose counterexample is larger than the goal, with their sizes
	// Unshrunk are the caught mutants without a shrink: caught by an
	// aggregate verdict, a proof or a test outside the seed harness, or a
	// shrink that did not leave its summary.
	Unshrunk []string
	// Controlled counts the shrunk counterexamples checked against the
	// code without their mutant (faultswitch: each passes there, and so
	// did every smaller run kept on the way). Refused sums the smaller
	// failing runs refused because that code failed them too. Uncontrolled
	// names the shrunk ones that could not be checked: a mutant with a
	// build of its own cannot be switched off.
	Controlled, Refused int
	Uncontrolled        []string
	// After names the controlled ones checked only after their shrink (a
	// mutant with a build of its own: controlAfter).
	After []string
}

// Shrinks computes ShrinkStats over the mutants.
func Shrinks(ms []MutantResult) ShrinkStats {
	var st ShrinkStats
	var walls []int64
	for _, m := range ms {
		s := m.Shrunk
		switch {
		case s == nil:
			if m.Caught {
				st.Unshrunk = append(st.Unshrunk, fmt.Sprintf("%s (caught by %s)", m.ID, oneLine(m.CaughtBy, 60)))
			}
			continue
		case s.ShrinkFail != "":
			st.Failed++
			st.Missed = append(st.Missed, fmt.Sprintf("%s: not shrunk: %s", m.ID, oneLine(s.ShrinkFail, 100)))
			continue
		}
		st.Shrunk++
		walls = append(walls, s.WallMs)
		switch {
		case s.Controlled:
			st.Controlled++
			st.Refused += s.Refused
		case m.AfterControl == afterPasses:
			st.Controlled++
			st.After = append(st.After, m.ID)
		default:
			st.Uncontrolled = append(st.Uncontrolled, m.ID)
		}
		if s.After.Operations <= GoalOperations && s.After.Preemptions <= GoalPreemptions {
			st.MetGoal++
		} else {
			st.Missed = append(st.Missed, fmt.Sprintf("%s: %d operations, %d preemptions", m.ID, s.After.Operations, s.After.Preemptions))
		}
	}
	if len(walls) > 0 {
		slices.Sort(walls)
		st.Median = time.Duration(walls[len(walls)/2]) * time.Millisecond
	}
	return st
}

// rel is path relative to the audit's directory, for a link in AUDIT.md.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// counterexampleLine is a mutant's minimal counterexample in AUDIT.md: its
// size before and after, its pages and the command that replays it.
func counterexampleLine(m MutantResult, dir string) string {
	s := m.Shrunk
	switch {
	case s == nil:
		return ""
	case s.ShrinkFail != "":
		return "not shrunk: " + mdCell(s.ShrinkFail)
	}
	line := fmt.Sprintf("minimal counterexample: %d operations, %d faults, %d preemptions, %d steps (from %d, %d, %d, %d) in %d re-runs, %v",
		s.After.Operations, s.After.Faults, s.After.Preemptions, s.After.Steps,
		s.Before.Operations, s.Before.Faults, s.Before.Preemptions, s.Before.Steps,
		s.Attempts, (time.Duration(s.WallMs) * time.Millisecond).Round(time.Millisecond))
	if s.Stopped != "" {
		line += " (stopped early: " + mdCell(s.Stopped) + ")"
	}
	switch {
	case s.Controlled:
		line += "; passes without the mutant"
	case m.AfterControl == afterPasses:
		line += "; passes without the mutant (replayed after the shrink)"
	case strings.HasPrefix(m.AfterControl, afterFails):
		line += "; FAILS without the mutant too: " + mdCell(strings.TrimPrefix(m.AfterControl, afterFails))
	default:
		line += "; not checked without the mutant"
	}
	if s.Timeline != "" {
		line += fmt.Sprintf("; [timeline](%s)", rel(dir, s.Timeline))
	}
	if s.Table != "" {
		line += fmt.Sprintf("; [interleaving](%s)", rel(dir, s.Table))
	}
	if s.Command != "" {
		line += fmt.Sprintf("; replay: `%s`", s.Command)
	}
	return line
}

// writeCounterexamples is AUDIT.md's summary of the shrinks.
func writeCounterexamples(b *strings.Builder, r *Report, dir string) {
	st := Shrinks(r.Mutants)
	if st.Shrunk+st.Failed == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Counterexamples\n\nEach caught mutant's first failing seed, shrunk (`-sim.shrink`) to fewer operations, faults and preemptions while it fails the same way. %d shrunk, %d of them to at most %d operations and %d preemptions; %d could not be shrunk; %d caught mutants have no shrunk seed; median shrink time %v.\n\n",
		st.Shrunk, st.MetGoal, GoalOperations, GoalPreemptions, st.Failed, len(st.Unshrunk), st.Median)
	fmt.Fprintf(b, "%d of the %d pass on the code without their mutant: each smaller run was kept only if that code passed it too (%d smaller failing runs were refused: the code without the mutant failed them as well, so they showed the edit, not the mutant).",
		st.Controlled, st.Shrunk, st.Refused)
	if len(st.After) > 0 {
		fmt.Fprintf(b, " Of those, %s (a build of its own, where the mutant cannot be switched off during the shrink) had its shrunk run replayed on that code afterwards.", strings.Join(st.After, ", "))
	}
	if len(st.Uncontrolled) > 0 {
		fmt.Fprintf(b, " Not checked: %s.", strings.Join(st.Uncontrolled, ", "))
	}
	b.WriteString("\n\n")
	if len(st.Missed) > 0 {
		b.WriteString("Larger than that, or not shrunk:\n\n")
		for _, m := range st.Missed {
			fmt.Fprintf(b, "- %s\n", mdCell(m))
		}
		b.WriteString("\n")
	}
	if len(st.Unshrunk) > 0 {
		b.WriteString("Caught without a shrunk seed (an aggregate verdict over seeds that each passed, a proof, or a test outside the seed harness):\n\n")
		for _, m := range st.Unshrunk {
			fmt.Fprintf(b, "- %s\n", mdCell(m))
		}
		b.WriteString("\n")
	}
	b.WriteString("| mutant | operations | faults | preemptions | steps | passes without the mutant | pages | replay |\n|---|---|---|---|---|---|---|---|\n")
	for _, m := range r.Mutants {
		s := m.Shrunk
		if s == nil || s.ShrinkFail != "" {
			continue
		}
		pages := ""
		if s.Timeline != "" {
			pages = fmt.Sprintf("[timeline](%s) ", rel(dir, s.Timeline))
		}
		pages += fmt.Sprintf("[table](%s)", rel(dir, s.Table))
		control := "not checked"
		switch {
		case s.Controlled:
			control = "yes"
		case m.AfterControl == afterPasses:
			control = "yes (replayed after the shrink)"
		case strings.HasPrefix(m.AfterControl, afterFails):
			control = "**no**: " + mdCell(strings.TrimPrefix(m.AfterControl, afterFails))
		}
		fmt.Fprintf(b, "| `%s` | %d ← %d | %d ← %d | %d ← %d | %d ← %d | %s | %s | `%s` |\n", m.ID,
			s.After.Operations, s.Before.Operations, s.After.Faults, s.Before.Faults,
			s.After.Preemptions, s.Before.Preemptions, s.After.Steps, s.Before.Steps, control, pages, s.Command)
	}
}

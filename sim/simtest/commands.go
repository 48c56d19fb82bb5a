package simtest

import (
	"fmt"
	"strings"
)

// The commands a failure prints. Each is meant to be pasted into a shell
// at the module's root and to reproduce exactly the printed run: the same
// code (a mutant's run goes through make, which applies the mutant), the
// same seed and every setting that shapes the run.

// seedCommand re-runs one seed of this test, or with shrink shrinks it.
func (h *harness) seedCommand(seed uint64, shrink bool) string {
	if rf := h.st.replay; rf != nil {
		return h.fileCommand(rf.Path, shrink)
	}
	flags := h.settingFlags()
	m := currentMutation()
	if m.id != "" {
		return MakeCommand(verb(shrink), m.id, m.catalogue, packagePath(), h.t.Name(), fmt.Sprintf("%#x", seed), flags)
	}
	return fmt.Sprintf("go test %s%s -run %s -sim.seed=%#x %s%s -v",
		overlayFlag(m), packagePath(), runPattern(h.seedName(seed)), seed, flags, shrinkFlag(shrink))
}

// fileCommand replays (or shrinks) the run a replay file of this test
// holds.
func (h *harness) fileCommand(path string, shrink bool) string {
	m := currentMutation()
	if m.id != "" {
		// The file names the mutant; make reads it and applies it.
		return fmt.Sprintf("make %s FILE=%s", verb(shrink), shellQuote(path))
	}
	return fmt.Sprintf("go test %s%s -run %s -sim.replay=%s%s -v",
		overlayFlag(m), packagePath(), runPattern(h.t.Name()), shellQuote(path), shrinkFlag(shrink))
}

// MakeCommand is the make command (verb "replay" or "shrink") that flies
// mutant (from the user's catalogue file, "" for the project's) in test of
// pkg at seed with the test flags args; seed or args may be "". Every
// value is quoted for a POSIX shell, so the command pastes as printed.
func MakeCommand(verb, mutant, catalogue, pkg, test, seed, args string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "make %s MUTANT=%s", verb, shellQuote(mutant))
	if catalogue != "" {
		b.WriteString(" MUTANTS=" + shellQuote(catalogue))
	}
	fmt.Fprintf(&b, " PKG=%s TEST=%s", shellQuote(pkg), shellQuote(test))
	if seed != "" {
		b.WriteString(" SEED=" + shellQuote(seed))
	}
	if args != "" {
		b.WriteString(" ARGS=" + shellQuote(args))
	}
	return b.String()
}

// seedName is the name of the subtest that runs seed.
func (h *harness) seedName(seed uint64) string {
	return fmt.Sprintf("%s/seed=%#x", h.t.Name(), seed)
}

// settingFlags are the flags, but for the seed, that shape a run: the
// strategy and its parameters, the step time and the step limit.
func (h *harness) settingFlags() string {
	st := h.st
	flags := "-sim.strategy=" + st.strategy
	if st.strategy == "pct" {
		flags += fmt.Sprintf(" -sim.pct.depth=%d -sim.pct.steps=%d", st.pctDepth, h.pctSteps)
	}
	if st.stepTime > 0 {
		flags += fmt.Sprintf(" -sim.steptime=%v", st.stepTime)
	}
	if st.maxSteps > 0 {
		flags += fmt.Sprintf(" -sim.maxsteps=%d", st.maxSteps)
	}
	return flags
}

func verb(shrink bool) string {
	if shrink {
		return "shrink"
	}
	return "replay"
}

func shrinkFlag(shrink bool) string {
	if shrink {
		return " -sim.shrink"
	}
	return ""
}

// overlayFlag repeats an -overlay the run was started with, when the
// project's tools did not name the mutant.
func overlayFlag(m mutation) string {
	if m.overlay == "" {
		return ""
	}
	return "-overlay=" + shellQuote(m.overlay) + " "
}

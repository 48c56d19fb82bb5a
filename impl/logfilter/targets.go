package logfilter

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
)

// targetTable is the filter of plain lists, tracing's Targets: a table of
// (target, level) rules built once and never written again. It has no
// lock, no atomic and no per-span state, so any number of goroutines read
// it at once without touching a shared cache line, and span enter and exit
// have nothing to tell it (LF-5).
type targetTable struct {
	rules  []targetRule // one per target, longest target first
	global slog.Level   // the bare level; LevelOff when there is none
}

type targetRule struct {
	target string
	level  slog.Level
}

// newTargetTable builds the table from static directives.
func newTargetTable(ds Directives) *targetTable {
	t := &targetTable{global: LevelOff}
	seen := make(map[string]bool, len(ds))
	globalSeen := false
	// Walk backwards so that the last directive for a target wins.
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if d.Target == "" {
			if !globalSeen {
				t.global, globalSeen = d.Level, true
			}
			continue
		}
		if seen[d.Target] {
			continue
		}
		seen[d.Target] = true
		t.rules = append(t.rules, targetRule{target: d.Target, level: d.Level})
	}
	// Longest first, so the first rule that covers a target is the most
	// specific one. Two rules of equal length can never both cover one
	// target; the name order only makes the table's layout deterministic.
	slices.SortFunc(t.rules, func(a, b targetRule) int {
		if c := cmp.Compare(len(b.target), len(a.target)); c != 0 {
			return c
		}
		return strings.Compare(a.target, b.target)
	})
	return t
}

// enabled reports whether an event at level from target passes: the most
// specific rule covering target decides, else the bare level, else nothing.
func (t *targetTable) enabled(target string, level slog.Level) bool {
	min := t.global
	for _, r := range t.rules {
		if within(r.target, target) {
			min = r.level
			break
		}
	}
	return min != LevelOff && level >= min
}

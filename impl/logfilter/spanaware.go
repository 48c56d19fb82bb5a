package logfilter

import (
	"log/slog"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// spanAware is the filter that understands span and field directives,
// tracing-subscriber's EnvFilter, with EnvFilter's costs.
//
// Static directives are looked up by the event's target. Dynamic ones are
// matched against spans when they are created: a span that matches at
// least one is registered in spans, under the write lock, with the most
// verbose level its matching directives enable. Entering a span takes the
// read lock to look it up, and so does exiting one (EnvFilter's on_enter
// and on_exit); closing a span removes it under the write lock. Those two
// read locks on every enter and exit, taken whether or not any directive
// names a span, are the contended lock of the source text; New avoids them
// for plain lists by choosing the target table instead.
type spanAware struct {
	byTarget map[string]slog.Level // static directives by target, last wins
	global   slog.Level            // the bare level; LevelOff when none
	dynamics []Directive           // dynamic directives, deduplicated, last wins

	mu    rt.RWMutex
	spans map[*Span]slog.Level // registered spans -> the level they enable (guarded by mu)
}

func newSpanAware(r rt.Runtime, ds Directives) *spanAware {
	f := &spanAware{
		byTarget: make(map[string]slog.Level),
		global:   LevelOff,
		mu:       r.NewRWMutex("logfilter.spans"),
		spans:    make(map[*Span]slog.Level),
	}
	seen := make(map[string]bool)
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if d.Dynamic() {
			// Same target, span and fields: the later directive replaces
			// the earlier one, as in EnvFilter's directive set.
			key := Directive{Target: d.Target, Span: d.Span, Fields: d.Fields}.String()
			if !seen[key] {
				seen[key] = true
				f.dynamics = append(f.dynamics, d)
			}
			continue
		}
		if d.Target == "" {
			if !seen[""] {
				f.global, seen[""] = d.Level, true
			}
			continue
		}
		if _, ok := f.byTarget[d.Target]; !ok {
			f.byTarget[d.Target] = d.Level
		}
	}
	return f
}

// staticEnabled reports whether the static directives enable an event at
// level from target. It looks the target up, then each shorter prefix that
// ends where a "::" begins, longest first. It is a map walk rather than the
// target table's scan of sorted rules. So the two paths share the rule but
// not its code, and a fault in either shows up in their differential.
func (f *spanAware) staticEnabled(target string, level slog.Level) bool {
	min, ok := f.byTarget[target]
	for i := len(target) - 2; !ok && i > 0; i-- {
		if target[i] == ':' && target[i+1] == ':' {
			min, ok = f.byTarget[target[:i]]
		}
	}
	if !ok {
		min = f.global
	}
	if min == LevelOff {
		return false
	}
	return level >= min
}

// match returns the most verbose level the dynamic directives matching a
// span enable, and whether any matched. A span matched only by "off"
// directives is registered with LevelOff: it enables nothing.
func (f *spanAware) match(s *Span) (slog.Level, bool) {
	level, matched := LevelOff, false
	for _, d := range f.dynamics {
		if d.Target != "" && !within(d.Target, s.target) {
			continue
		}
		if d.Span != "" && d.Span != s.name {
			continue
		}
		if !fieldsMatch(d.Fields, s.fields) {
			continue
		}
		matched = true
		level = min(level, d.Level)
	}
	return level, matched
}

func fieldsMatch(want, have []Field) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// register records a new span if any dynamic directive matches it. The
// matching runs before the lock: directives never change.
func (f *spanAware) register(s *Span) {
	if len(f.dynamics) == 0 {
		return
	}
	level, ok := f.match(s)
	if !ok {
		return
	}
	f.mu.Lock()
	f.spans[s] = level
	f.mu.Unlock()
}

// lookup is the per-enter and per-exit read of the registry.
func (f *spanAware) lookup(s *Span) (slog.Level, bool) {
	f.mu.RLock()
	level, ok := f.spans[s]
	f.mu.RUnlock()
	return level, ok
}

// unregister forgets a closed span.
func (f *spanAware) unregister(s *Span) {
	if len(f.dynamics) == 0 {
		return
	}
	f.mu.Lock()
	delete(f.spans, s)
	f.mu.Unlock()
}

// spanCount returns how many spans are registered (for tests of Close).
func (f *spanAware) spanCount() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.spans)
}

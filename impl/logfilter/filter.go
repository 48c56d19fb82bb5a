package logfilter

import "github.com/windtunnel/windtunnel/impl/rt"

// Kind says which filter a Filter is.
type Kind int

const (
	// KindTargets is the lock-free target table (tracing's Targets), which
	// New chooses for plain lists.
	KindTargets Kind = iota + 1
	// KindSpanAware is the span-aware filter (tracing's EnvFilter), which
	// New chooses for every other list.
	KindSpanAware
)

// String returns "targets" or "span-aware".
func (k Kind) String() string {
	switch k {
	case KindTargets:
		return "targets"
	case KindSpanAware:
		return "span-aware"
	}
	return "invalid"
}

// Filter decides which events a Handler passes on. It is immutable except
// for the span registry of a span-aware filter, which is guarded by its
// rt.RWMutex, so a Filter is safe for concurrent use.
//
// A Filter is used through a Handler, made by Spans.Handler. One Filter may
// back several handlers.
type Filter struct {
	kind       Kind
	directives Directives
	table      *targetTable // KindTargets
	aware      *spanAware   // KindSpanAware
}

// New parses a directive list and returns the filter for it, choosing by
// LF-1's rule (IsPlain): a plain list gets the lock-free target table,
// every other list the span-aware filter. The rule is what makes the
// choice invisible: the two read every plain list the same way (LF-2),
// and lists they read differently, such as an empty level `target=`
// (TRACE here, ERROR for the target table, LF-3), are not plain.
//
// A list that is not plain and does not parse (a bad level, an unclosed
// bracket, ...) is reported with Parse's error, naming the segment.
//
// An empty list enables nothing, like an empty Targets; a service that
// wants a default when its variable is unset passes one, e.g. "info".
// The runtime provides the span-aware filter's lock; nil means rt.Real().
func New(r rt.Runtime, list string) (*Filter, error) {
	if IsPlain(list) {
		return NewTargets(list)
	}
	return NewSpanAware(r, list)
}

// NewTargets returns the target-table filter for a list, read by
// ParseTargets (so `target=` means ERROR and span directives are errors).
// New calls it for plain lists; calling it directly forces that path.
func NewTargets(list string) (*Filter, error) {
	ds, err := ParseTargets(list)
	if err != nil {
		return nil, err
	}
	return &Filter{kind: KindTargets, directives: ds, table: newTargetTable(ds)}, nil
}

// NewSpanAware returns the span-aware filter for a list, read by Parse,
// whatever the list. New calls it for lists that are not plain; calling it
// directly forces that path, with its read lock per span enter and exit,
// for example to compare the two. A nil runtime means rt.Real().
func NewSpanAware(r rt.Runtime, list string) (*Filter, error) {
	ds, err := Parse(list)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = rt.Real()
	}
	return &Filter{kind: KindSpanAware, directives: ds, aware: newSpanAware(r, ds)}, nil
}

// Kind reports which filter this is: KindTargets or KindSpanAware.
func (f *Filter) Kind() Kind { return f.kind }

// Directives returns the parsed directives, in list order.
func (f *Filter) Directives() Directives {
	out := make(Directives, len(f.directives))
	for i, d := range f.directives {
		d.Fields = append([]Field(nil), d.Fields...)
		out[i] = d
	}
	return out
}

// String returns the directive list in canonical syntax.
func (f *Filter) String() string { return f.directives.String() }

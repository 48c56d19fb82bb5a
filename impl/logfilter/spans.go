package logfilter

import (
	"context"
	"log/slog"
)

// Spans is a span registry: the filters installed together (typically one
// for logs and one for telemetry, as the relay of the source text has two
// per-layer filters) and the spans created through it. Creating, entering,
// exiting and closing a span notifies every installed span-aware filter
// once; installed target tables are never notified, since they keep no
// span state. So with two filters on the span-aware path, every enter and
// every exit takes 2 read locks (one per filter), and with both on the
// target path it takes none (LF-5).
//
// The set of filters is fixed when the registry is made: reading it on
// every enter then needs no lock of its own.
type Spans struct {
	filters []*Filter
	aware   []*spanAware // the span-aware filters among filters, in order
}

// NewSpans returns a registry for these filters. Nil filters are ignored,
// and a filter given twice is installed once (it would otherwise be
// notified twice per enter).
func NewSpans(filters ...*Filter) *Spans {
	s := &Spans{}
	for _, f := range filters {
		if f == nil || s.index(f) >= 0 {
			continue
		}
		s.filters = append(s.filters, f)
		if f.aware != nil {
			s.aware = append(s.aware, f.aware)
		}
	}
	return s
}

func (s *Spans) index(f *Filter) int {
	for i, g := range s.filters {
		if g == f {
			return i
		}
	}
	return -1
}

// awareIndex is f's position among the span-aware filters, or -1.
func (s *Spans) awareIndex(f *Filter) int {
	for i, a := range s.aware {
		if a == f.aware {
			return i
		}
	}
	return -1
}

// Span is a span: a named unit of work with a target and fields, which
// span directives such as [conn]=debug or buzz_relay[conn{peer=a}]=trace
// select. A span is created once (Spans.Start), entered and exited any
// number of times, possibly by several goroutines at once, and closed once.
// All its methods are safe for concurrent use.
//
// Spans travel in the context: Enter returns a context that carries the
// span, Exit returns the context from before Enter, and a Handler reads
// the spans of the context an event is logged with (Logger.DebugContext
// and friends). A span entered in a context stays entered in every context
// derived from it, including those handed to goroutines started inside
// it, which is how a span directive covers nested spans.
type Span struct {
	spans  *Spans
	target string
	name   string
	fields []Field
}

// Start creates a span with a target (e.g. "buzz_relay::conn"), a name
// (e.g. "conn") and fields, and registers it with every span-aware filter
// whose dynamic directives match it (under that filter's write lock). The
// fields' values are resolved (slog.LogValuer) and their text kept for
// matching {field=value}; attributes inside groups are not fields.
//
// Close the span when its work is done: the registry otherwise keeps it.
func (s *Spans) Start(target, name string, fields ...slog.Attr) *Span {
	sp := &Span{spans: s, target: target, name: name}
	if len(fields) > 0 {
		sp.fields = make([]Field, 0, len(fields))
		for _, a := range fields {
			sp.fields = append(sp.fields, Field{Name: a.Key, Value: a.Value.Resolve().String()})
		}
	}
	for _, f := range s.aware {
		f.register(sp)
	}
	return sp
}

// Target returns the span's target.
func (sp *Span) Target() string { return sp.target }

// Name returns the span's name.
func (sp *Span) Name() string { return sp.name }

// scopeKey is the context key of a registry's innermost entered span. The
// registry is part of the key, so spans of two registries can be entered
// in one context without seeing each other.
type scopeKey struct{ s *Spans }

// scope is one entered span in a context: a node of the stack that the
// context chain forms.
type scope struct {
	span   *Span
	outer  context.Context // the context Enter was given, which Exit returns
	parent *scope          // the enclosing entered span of the same registry
	// levels[i] is the most verbose level enabled for the i-th span-aware
	// filter by this span or any enclosing one (LevelOff: none), folded in
	// at Enter so an event costs one context lookup, not a walk.
	levels []slog.Level
}

// Enter enters the span and returns a context carrying it; log with that
// context to log inside the span. Each span-aware filter looks the span up
// under its read lock (EnvFilter's on_enter). With no span-aware filter
// installed, Enter does nothing and returns ctx itself.
//
// A span that no filter's dynamic directives enable anything for adds
// nothing to the context either: Enter then returns ctx.
func (sp *Span) Enter(ctx context.Context) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if sp == nil || sp.spans == nil || len(sp.spans.aware) == 0 {
		return ctx
	}
	aware := sp.spans.aware
	var levels []slog.Level
	for i, f := range aware {
		level, ok := f.lookup(sp)
		if !ok || level == LevelOff {
			continue
		}
		if levels == nil {
			levels = make([]slog.Level, len(aware))
			for j := range levels {
				levels[j] = LevelOff
			}
		}
		levels[i] = level
	}
	if levels == nil {
		return ctx
	}
	key := scopeKey{sp.spans}
	parent, _ := ctx.Value(key).(*scope)
	if parent != nil {
		for i := range levels {
			levels[i] = min(levels[i], parent.levels[i])
		}
	}
	return context.WithValue(ctx, key, &scope{span: sp, outer: ctx, parent: parent, levels: levels})
}

// Exit exits the span and returns the context from before the matching
// Enter (ctx itself when Enter added nothing). The usual form is
//
//	ctx = span.Enter(ctx)
//	...
//	ctx = span.Exit(ctx)
//
// or, when the entered context is not used after the function returns,
// defer span.Exit(ctx). Exiting a span that encloses spans still entered
// in ctx exits those too.
//
// Each span-aware filter looks the span up under its read lock, as
// EnvFilter's on_exit does before it pops its per-thread scope stack. Here
// the stack is the context, so popping needs no lookup. The lookup is kept so
// that the span-aware filter stays the faithful baseline of the source text.
// Its cost, one shared read lock per filter per exit, is exactly what New's
// target path removes (LF-5).
func (sp *Span) Exit(ctx context.Context) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if sp == nil || sp.spans == nil || len(sp.spans.aware) == 0 {
		return ctx
	}
	for _, f := range sp.spans.aware {
		f.lookup(sp)
	}
	n, _ := ctx.Value(scopeKey{sp.spans}).(*scope)
	for ; n != nil; n = n.parent {
		if n.span == sp {
			return n.outer
		}
	}
	return ctx
}

// Close removes the span from the registry of every span-aware filter.
// Contexts that still carry the span keep what it enabled; entering it
// again enables nothing. Closing twice is harmless.
func (sp *Span) Close() {
	if sp == nil || sp.spans == nil {
		return
	}
	for _, f := range sp.spans.aware {
		f.unregister(sp)
	}
}

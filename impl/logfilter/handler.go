package logfilter

import (
	"context"
	"errors"
	"log/slog"
)

// TargetKey is the attribute key that sets an event's target: a Handler
// takes the target from the last top-level attribute with this key given
// to WithAttrs, that is from Logger.With(logfilter.Target("buzz_relay::conn")).
// The attribute is also passed on to the wrapped handler, so it is printed.
//
// The target is a property of the logger, not of one record: Enabled,
// which slog calls before a record exists, must know it. So a "target"
// attribute given with a single record (logger.Info("msg", "target", "x"))
// is an ordinary attribute, and an event from a logger without a target
// has the empty target, which only bare-level directives cover.
const TargetKey = "target"

// Target returns the attribute that sets the target of a logger's events:
// slog.New(h).With(logfilter.Target("buzz_relay::conn")).
func Target(name string) slog.Attr { return slog.String(TargetKey, name) }

// ErrNotInstalled is returned by Spans.Handler for a filter that was not
// given to NewSpans: its span directives would never see a span.
var ErrNotInstalled = errors.New("logfilter: filter not installed in this span registry")

// Handler is an slog.Handler that passes on to another handler the events
// its filter enables, judged by the event's level, the logger's target
// (TargetKey) and, on the span-aware path, the spans entered in the
// event's context. It checks in Enabled and again in Handle, so records
// given to Handle directly are filtered too; Enabled also asks the wrapped
// handler.
//
// On the target path neither check reads the context, and neither ever
// takes a lock.
type Handler struct {
	next    slog.Handler
	filter  *Filter
	key     scopeKey
	idx     int    // filter's index among the registry's span-aware filters; -1 on the target path
	target  string // the event target set with TargetKey
	grouped bool   // WithGroup was called: later attributes are not the target
}

var _ slog.Handler = (*Handler)(nil)

// Handler returns a handler that filters events for next with f, which
// must be installed in s (ErrNotInstalled otherwise). Two handlers over one
// registry, one per filter, are the logs-and-telemetry arrangement of the
// source text: combine them with slog.NewMultiHandler, and one span enter
// notifies both filters.
func (s *Spans) Handler(next slog.Handler, f *Filter) (*Handler, error) {
	if next == nil {
		return nil, errors.New("logfilter: nil next handler")
	}
	if f == nil || s.index(f) < 0 {
		return nil, ErrNotInstalled
	}
	h := &Handler{next: next, filter: f, key: scopeKey{s}, idx: -1}
	if f.aware != nil {
		h.idx = s.awareIndex(f)
	}
	return h, nil
}

// Filter returns the handler's filter.
func (h *Handler) Filter() *Filter { return h.filter }

// Enabled reports whether an event at level, logged with ctx, passes the
// filter and is enabled by the wrapped handler.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.pass(ctx, level) && h.next.Enabled(ctx, level)
}

// Handle passes r on to the wrapped handler if the filter enables it, and
// drops it (returning nil) otherwise.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if !h.pass(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a handler whose wrapped handler has the attributes; a
// top-level TargetKey attribute among them becomes the event target.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	if !h.grouped {
		for _, a := range attrs {
			if a.Key == TargetKey {
				c.target = a.Value.Resolve().String()
			}
		}
	}
	c.next = h.next.WithAttrs(attrs)
	return &c
}

// WithGroup returns a handler whose wrapped handler opens the group. The
// target stays as it was: a TargetKey attribute inside a group is just an
// attribute.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.grouped = true
	c.next = h.next.WithGroup(name)
	return &c
}

// pass is the filter decision for one event.
func (h *Handler) pass(ctx context.Context, level slog.Level) bool {
	if t := h.filter.table; t != nil {
		return t.enabled(h.target, level)
	}
	if ctx != nil && h.idx >= 0 {
		if n, ok := ctx.Value(h.key).(*scope); ok {
			if l := n.levels[h.idx]; l != LevelOff && level >= l {
				return true
			}
		}
	}
	return h.filter.aware.staticEnabled(h.target, level)
}

package logfilter

import (
	"log/slog"
	"strings"
)

// ParseTargets parses a directive list as the target table's own parser reads
// it, which is how tracing-subscriber's Targets reads one. Segments are
// `level`, `target=level` or a bare `target` (every level). Empty segments
// and surrounding whitespace are ignored, and for a repeated target the last
// directive wins.
//
// It differs from Parse in two ways, both kept on purpose because they are
// what made the source text route carefully:
//
//   - An empty level, `target=`, reads as ERROR (tracing-core parses an
//     empty level filter as ERROR), where Parse reads TRACE (LF-3).
//   - Span and field directives are errors (ErrSpanDirective). The table
//     keeps no per-span state, so it cannot honour them.
//
// An empty target, `=debug`, is an error here (ErrBadTarget). New never calls
// ParseTargets on a list that is not plain (see IsPlain). So none of these
// differences can change what a filter made by New logs. NewTargets exposes
// this parser's reading directly.
func ParseTargets(list string) (Directives, error) {
	segs, err := split(list, false)
	if err != nil {
		return nil, err
	}
	out := make(Directives, 0, len(segs))
	for _, s := range segs {
		d, f := parseTargetSegment(s.text)
		if f != nil {
			return nil, s.fail(f)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseTargetSegment(s string) (Directive, *fault) {
	if strings.ContainsAny(s, "[]{}") {
		return Directive{}, faultf(ErrSpanDirective, "the target table keeps no span state; use New or NewSpanAware")
	}
	if l, ok := parseLevel(s); ok {
		return Directive{Level: l}, nil
	}
	target, lv, hasLevel := strings.Cut(s, "=")
	switch {
	case target == "" && hasLevel:
		return Directive{}, faultf(ErrBadTarget, "empty target before '='")
	case !validTarget(target):
		return Directive{}, faultf(ErrBadTarget, "%s", quoteShort(target))
	case !hasLevel:
		return Directive{Target: target, Level: LevelTrace}, nil
	case lv == "":
		return Directive{Target: target, Level: slog.LevelError}, nil
	case strings.Contains(lv, "="):
		return Directive{}, faultf(ErrSyntax, "more than one '='")
	}
	l, ok := parseLevel(lv)
	if !ok {
		return Directive{}, faultf(ErrBadLevel, "%s", quoteShort(lv))
	}
	return Directive{Target: target, Level: l}, nil
}

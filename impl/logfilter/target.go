package logfilter

import (
	"strings"
	"unicode"
)

// Targets are module-style paths whose segments are separated by "::", as
// tracing's targets are (buzz_relay::conn). A directive for a target covers
// that target and every target below it at a segment boundary, and nothing
// else. So buzz_relay covers buzz_relay and buzz_relay::conn, but not the
// prefix lookalike buzz_relayer. tracing itself compares plain string
// prefixes, where buzz_relay would also cover buzz_relayer. This package
// takes the segment-boundary rule instead. Both of its filters apply the same
// rule, so the choice never makes the two paths differ (LF-2).

// within reports whether a directive for rule covers an event or span
// target: target is rule, or rule followed by "::" and anything.
func within(rule, target string) bool {
	if !strings.HasPrefix(target, rule) {
		return false
	}
	rest := target[len(rule):]
	return rest == "" || strings.HasPrefix(rest, "::")
}

// validTarget reports whether s may be written as a directive's target:
// one or more words separated by "::", none of them empty.
func validTarget(s string) bool {
	if s == "" {
		return false
	}
	for part := range strings.SplitSeq(s, "::") {
		if !validWord(part) {
			return false
		}
	}
	return true
}

// validWord reports whether s is a non-empty run of letters, digits, '_',
// '-' and '.': the characters of a target segment, a span name and a field
// name. Everything else (whitespace, ':', '=', ',', brackets, braces, quotes,
// '/') either has a meaning in the syntax or is most likely a typo.
func validWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

package logfilter

import "strings"

// IsPlain reports whether a directive list is plain, the rule (LF-1) by which
// New routes it. A list is plain exactly when every non-empty segment,
// trimmed, is `level` or `target=level` with a known, non-empty level, and no
// segment names a span `[...]` or a field `{...}`. A list of no directives at
// all ("", " , ") is plain.
//
// Everything else is not plain: span or field directives, a bare target, an
// empty level (`target=`, which the two parsers read differently), an empty
// target (`=debug`), an unknown level, a malformed target. So is any list
// beyond MaxListBytes or MaxSegments. Only plain lists are read the same by
// Parse and ParseTargets, which is what lets New serve them lock-free.
func IsPlain(list string) bool {
	if len(list) > MaxListBytes {
		return false
	}
	n := 0
	for seg := range strings.SplitSeq(list, ",") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		if n++; n > MaxSegments {
			return false
		}
		if _, ok := parseLevel(seg); ok {
			continue
		}
		// A segment that names a span or a field is never plain, and needs
		// no test of its own: '[', ']', '{' and '}' are neither target
		// characters nor part of a level.
		target, lv, ok := strings.Cut(seg, "=")
		if !ok || !validTarget(target) {
			return false
		}
		if _, ok := parseLevel(lv); !ok {
			return false // empty, unknown, or "debug=info"
		}
	}
	return true
}

package logfilter

import "strings"

// Parse parses a directive list as the span-aware filter reads it, which is
// how tracing-subscriber's EnvFilter reads one. Segments are separated by
// commas; empty segments and whitespace around a segment are ignored. Each
// segment is one of
//
//	level                          every target, e.g. info
//	target=level                   buzz_relay::conn=debug
//	target                         a bare target: every level (TRACE)
//	target=                        an empty level: every level (TRACE), as EnvFilter reads it
//	=level                         an empty target: every target, like a bare level
//	target[span]=level             inside spans named span whose target is under target
//	[span]=level                   inside spans named span, any target
//	target[span{field=value}]=level
//	[{field=value,field=value}]=level  inside spans with these field values, any name
//
// Levels are trace, debug, info, warn, error and off, in any case; see
// LevelTrace and LevelOff for how they map onto slog levels. Inside [...] the
// span name, field names and values are trimmed of whitespace. A field value
// may hold any character but , = [ ] { }. Every field needs a value. A bare
// field name, which EnvFilter reads as "the span has this field", is an error
// here.
//
// A target is words of letters, digits, '_', '-' and '.' joined by "::"
// (see the segment-boundary rule in the package documentation).
//
// When several directives have the same target (and, for dynamic ones, the
// same span and fields), the last one wins.
//
// Errors are *ParseError values naming the segment and what is wrong with
// it. Parse never panics; lists are bounded by MaxListBytes and
// MaxSegments.
func Parse(list string) (Directives, error) {
	segs, err := split(list, true)
	if err != nil {
		return nil, err
	}
	out := make(Directives, 0, len(segs))
	for _, s := range segs {
		d, f := parseSegment(s.text)
		if f != nil {
			return nil, s.fail(f)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseSegment parses one trimmed, non-empty segment.
func parseSegment(s string) (Directive, *fault) {
	if l, ok := parseLevel(s); ok {
		return Directive{Level: l}, nil
	}
	i := strings.IndexAny(s, "[]{}=")
	if i < 0 {
		// A bare target enables every level, for EnvFilter as for Targets.
		if !validTarget(s) {
			return Directive{}, faultf(ErrBadTarget, "%s (not a level either)", quoteShort(s))
		}
		return Directive{Target: s, Level: LevelTrace}, nil
	}
	d := Directive{Target: s[:i]}
	if d.Target != "" && !validTarget(d.Target) {
		return Directive{}, faultf(ErrBadTarget, "%s", quoteShort(d.Target))
	}
	rest := s[i:]
	switch rest[0] {
	case '{':
		return Directive{}, faultf(ErrSyntax, "a field list must be inside [...]: write target[{field=value}]=level")
	case ']', '}':
		return Directive{}, faultf(ErrSyntax, "unexpected %q", rest[0])
	case '[':
		var f *fault
		d.Span, d.Fields, rest, f = parseSpan(rest)
		if f != nil {
			return Directive{}, f
		}
		if rest != "" && rest[0] != '=' {
			return Directive{}, faultf(ErrSyntax, "unexpected %s after ']' (want '=level' or nothing)", quoteShort(rest))
		}
	}
	if rest == "" {
		d.Level = LevelTrace // target[span] with no '=': every level
		return d, nil
	}
	lv := rest[1:] // after '='
	switch {
	case lv == "":
		// EnvFilter reads an empty level as TRACE; the target table's own
		// parser would read ERROR, which is why such lists are not plain.
		d.Level = LevelTrace
	case strings.ContainsAny(lv, "=[]{}"):
		return Directive{}, faultf(ErrSyntax, "unexpected %q in the level %s (one '=' per directive, outside [...])",
			lv[strings.IndexAny(lv, "=[]{}")], quoteShort(lv))
	default:
		l, ok := parseLevel(lv)
		if !ok {
			return Directive{}, faultf(ErrBadLevel, "%s", quoteShort(lv))
		}
		d.Level = l
	}
	return d, nil
}

// parseSpan parses the span part of a directive, rest starting with '[':
// [name], [name{fields}], [{fields}] or []. It returns what follows ']'.
func parseSpan(rest string) (name string, fields []Field, after string, f *fault) {
	j := strings.IndexAny(rest[1:], "[]{}")
	if j < 0 {
		return "", nil, "", faultf(ErrUnclosedBracket, "no ']' ends the span directive (a comma inside [...] does not end a segment)")
	}
	j++
	name = strings.TrimSpace(rest[1:j])
	if name != "" && !validWord(name) {
		return "", nil, "", faultf(ErrBadName, "span name %s", quoteShort(name))
	}
	switch rest[j] {
	case ']':
		return name, nil, rest[j+1:], nil
	case '[':
		return "", nil, "", faultf(ErrSyntax, "unexpected '[' inside a span directive")
	case '}':
		return "", nil, "", faultf(ErrSyntax, "unexpected '}' inside a span directive (no '{' opened it)")
	}
	// rest[j] == '{'
	k := strings.IndexAny(rest[j+1:], "[]{}")
	if k < 0 || rest[j+1+k] == ']' {
		return "", nil, "", faultf(ErrUnclosedBrace, "no '}' ends the field list of the span directive")
	}
	k += j + 1
	if rest[k] != '}' {
		return "", nil, "", faultf(ErrSyntax, "unexpected %q inside a field list", rest[k])
	}
	fields, f = parseFields(rest[j+1 : k])
	if f != nil {
		return "", nil, "", f
	}
	if k+1 == len(rest) {
		return "", nil, "", faultf(ErrUnclosedBracket, "no ']' after the field list")
	}
	if rest[k+1] != ']' {
		return "", nil, "", faultf(ErrSyntax, "unexpected %q after the field list (want ']')", rest[k+1])
	}
	return name, fields, rest[k+2:], nil
}

// parseFields parses the inside of {...}: field=value pairs separated by
// commas. An empty list, {}, has no fields.
func parseFields(inner string) ([]Field, *fault) {
	if strings.TrimSpace(inner) == "" {
		return nil, nil
	}
	var fields []Field
	for part := range strings.SplitSeq(inner, ",") {
		p := strings.TrimSpace(part)
		if p == "" {
			return nil, faultf(ErrSyntax, "empty field in the field list %s", quoteShort(inner))
		}
		name, value, ok := strings.Cut(p, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, faultf(ErrFieldValue, "field %s (write {name=value})", quoteShort(p))
		case !validWord(name):
			return nil, faultf(ErrBadName, "field name %s", quoteShort(name))
		case value == "":
			return nil, faultf(ErrFieldValue, "field %s has an empty value", quoteShort(name))
		case strings.Contains(value, "="):
			return nil, faultf(ErrSyntax, "more than one '=' in field %s", quoteShort(p))
		}
		fields = append(fields, Field{Name: name, Value: value})
	}
	return fields, nil
}

package logfilter

import (
	"fmt"
	"strings"
)

// segment is one non-empty, trimmed segment of a directive list, with its
// position among all the list's segments (empty ones included), which is
// what error messages report.
type segment struct {
	index int
	text  string
}

func (s segment) fail(f *fault) error {
	return &ParseError{Index: s.index, Segment: s.text, Err: f.err, Detail: f.detail}
}

// split cuts a directive list into its non-empty segments, trimmed of
// surrounding whitespace; empty segments (",,") are dropped. It enforces
// MaxListBytes and MaxSegments.
//
// With nested set, a comma inside [...] or {...} does not end a segment,
// so that span directives with several fields, [conn{a=1,b=2}]=debug, stay
// whole. An unclosed '[' then extends its segment to the end of the list;
// the segment parser reports it. The target table's parser splits at
// every comma (nested unset), as tracing's Targets does: it rejects
// brackets anyway.
func split(list string, nested bool) ([]segment, error) {
	if len(list) > MaxListBytes {
		return nil, &ParseError{Index: -1, Segment: list, Err: ErrTooLong,
			Detail: fmt.Sprintf("%d bytes, the limit is %d", len(list), MaxListBytes)}
	}
	var out []segment
	index, start, depth := 0, 0, 0
	add := func(end int) error {
		text := strings.TrimSpace(list[start:end])
		if text != "" {
			if len(out) == MaxSegments {
				return &ParseError{Index: index, Segment: text, Err: ErrTooManySegments,
					Detail: fmt.Sprintf("more than %d non-empty segments", MaxSegments)}
			}
			out = append(out, segment{index: index, text: text})
		}
		index++
		start = end + 1
		return nil
	}
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '[', '{':
			if nested {
				depth++
			}
		case ']', '}':
			if nested && depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				if err := add(i); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := add(len(list)); err != nil {
		return nil, err
	}
	return out, nil
}

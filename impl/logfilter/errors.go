package logfilter

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Input bounds. A directive list usually comes from an environment variable,
// so it is bounded before any work is done on it. A list longer than
// MaxListBytes, or with more than MaxSegments non-empty segments, is rejected
// with a *ParseError (ErrTooLong, ErrTooManySegments). IsPlain reports false
// for it.
const (
	MaxListBytes = 64 << 10 // 64 KiB
	MaxSegments  = 1024
)

// The kinds of parse errors. A *ParseError wraps exactly one of them, so
// errors.Is(err, ErrBadLevel) tells what went wrong.
var (
	ErrBadLevel        = errors.New("unknown level (want trace, debug, info, warn, error or off)")
	ErrBadTarget       = errors.New("bad target (want words of letters, digits, '_', '-', '.' separated by \"::\")")
	ErrBadName         = errors.New("bad span or field name (want letters, digits, '_', '-', '.')")
	ErrUnclosedBracket = errors.New("unclosed '['")
	ErrUnclosedBrace   = errors.New("unclosed '{'")
	ErrFieldValue      = errors.New("field without '=value'")
	ErrSyntax          = errors.New("syntax error")
	ErrSpanDirective   = errors.New("span or field directive in a target-only list")
	ErrTooLong         = errors.New("directive list too long")
	ErrTooManySegments = errors.New("too many directives")
)

// ParseError reports what is wrong with a directive list and where.
type ParseError struct {
	// Index is the 0-based position of the offending segment among the
	// list's comma-separated segments (empty ones included), or -1 when the
	// list as a whole is rejected (ErrTooLong).
	Index int
	// Segment is the offending segment, trimmed (for Index -1: the list).
	// Error prints it quoted and, when long, truncated.
	Segment string
	// Err is the kind of error: one of the Err* variables.
	Err error
	// Detail says precisely what is wrong, e.g. `"verbose"`.
	Detail string
}

// Error returns, for example:
//
//	logfilter: segment 1 "buzz_relay=verbose": unknown level (want trace, ...): "verbose"
func (e *ParseError) Error() string {
	msg := "invalid directive"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Index < 0 {
		return "logfilter: " + msg
	}
	return fmt.Sprintf("logfilter: segment %d %s: %s", e.Index, quoteShort(e.Segment), msg)
}

// Unwrap returns the kind of the error, for errors.Is.
func (e *ParseError) Unwrap() error { return e.Err }

// quoteLimit bounds how much of a segment an error message repeats.
const quoteLimit = 40

// quoteShort quotes s, cut to its first quoteLimit bytes (at a rune
// boundary) when it is longer, so that a 64 KiB segment does not end up in
// a log line.
func quoteShort(s string) string {
	if len(s) <= quoteLimit {
		return strconv.Quote(s)
	}
	cut := quoteLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// fault is a segment parser's error, before the segment is known to it.
type fault struct {
	err    error
	detail string
}

func faultf(err error, format string, args ...any) *fault {
	return &fault{err: err, detail: fmt.Sprintf(format, args...)}
}

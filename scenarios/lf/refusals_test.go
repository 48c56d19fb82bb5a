package lf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestLF1_RefusedListsNameTheirSegment: a list that cannot be read is
// refused, by Parse and by New alike, with a *ParseError that names the
// offending segment by its place among all the list's comma-separated
// segments (empty ones included, commas inside [...] not splitting),
// trimmed, the kind of mistake (errors.Is) and a detail; its message
// carries all four, as ParseError documents. The places and segments are
// the test's own reading of each list.
func TestLF1_RefusedListsNameTheirSegment(t *testing.T) {
	for _, c := range []struct {
		list    string
		index   int
		segment string
		kind    error
	}{
		{"info,buzz_relay=verbose", 1, "buzz_relay=verbose", logfilter.ErrBadLevel},
		{" , warn, x=loud ", 2, "x=loud", logfilter.ErrBadLevel},
		{"buzz relay", 0, "buzz relay", logfilter.ErrBadTarget},
		{"info,,buzz relay=debug", 2, "buzz relay=debug", logfilter.ErrBadTarget},
		{"[conn", 0, "[conn", logfilter.ErrUnclosedBracket},
		{"warn,[conn{peer=a,b=2}", 1, "[conn{peer=a,b=2}", logfilter.ErrUnclosedBracket},
		{"warn,[conn{peer=a,b=2}=debug", 1, "[conn{peer=a,b=2}=debug", logfilter.ErrSyntax},
		{"[conn{peer=a]=debug", 0, "[conn{peer=a]=debug", logfilter.ErrUnclosedBrace},
		{"info,[conn{peer=a", 1, "[conn{peer=a", logfilter.ErrUnclosedBrace},
		{"[conn{a[b}]=debug", 0, "[conn{a[b}]=debug", logfilter.ErrSyntax},
		{"[conn{a=1,,b=2}]=debug", 0, "[conn{a=1,,b=2}]=debug", logfilter.ErrSyntax},
		{"[conn{a=1}x", 0, "[conn{a=1}x", logfilter.ErrSyntax},
		{"[c o]=debug", 0, "[c o]=debug", logfilter.ErrBadName},
		{"[conn{peer}]=debug", 0, "[conn{peer}]=debug", logfilter.ErrFieldValue},
		{"info,x=debug=info", 1, "x=debug=info", logfilter.ErrSyntax},
		{"x{a=1}=debug", 0, "x{a=1}=debug", logfilter.ErrSyntax},
		{"[conn]x=debug", 0, "[conn]x=debug", logfilter.ErrSyntax},
		{"info,[conn]x", 1, "[conn]x", logfilter.ErrSyntax},
	} {
		for _, entry := range []struct {
			name string
			err  error
		}{{"Parse", parseErr(c.list)}, {"New", newErr(c.list)}} {
			var pe *logfilter.ParseError
			if !errors.As(entry.err, &pe) {
				t.Errorf("LF-1: %s(%q) = %v; want a *ParseError", entry.name, c.list, entry.err)
				continue
			}
			if pe.Index != c.index || pe.Segment != c.segment || !errors.Is(entry.err, c.kind) || pe.Detail == "" {
				t.Errorf("LF-1: %s(%q): segment %d %q, kind %v, detail %q; want segment %d %q, kind %v, a detail",
					entry.name, c.list, pe.Index, pe.Segment, pe.Err, pe.Detail, c.index, c.segment, c.kind)
			}
			want := fmt.Sprintf("logfilter: segment %d %s: %s: %s", c.index, strconv.Quote(c.segment), c.kind.Error(), pe.Detail)
			if got := entry.err.Error(); got != want {
				t.Errorf("LF-1: %s(%q) says\n\t%s\nwant\n\t%s", entry.name, c.list, got, want)
			}
		}
	}

	// The detail names the character that went wrong where the list has
	// one (the one after the field list here).
	for list, char := range map[string]string{ //windtunnel:unordered independent cases
		"[conn{peer=a,b=2}=debug": "'='", "[conn{a=1}x": "'x'", "]=debug": "']'", "x}=warn": "'}'", "[conn]x=debug": `"x=debug"`,
	} {
		var pe *logfilter.ParseError
		if err := parseErr(list); !errors.As(err, &pe) || !strings.Contains(pe.Detail, char) {
			t.Errorf("LF-1: Parse(%q) = %v; want a detail naming %s", list, err, char)
		}
	}
	// The target table's own reader refuses span and field directives.
	for _, list := range []string{"[conn]=debug", "info,buzz[conn]", "x{a=1}=info"} {
		if _, err := logfilter.NewTargets(list); !errors.Is(err, logfilter.ErrSpanDirective) {
			t.Errorf("LF-1: NewTargets(%q): %v; want ErrSpanDirective", list, err)
		}
	}

	// A list refused as a whole names no segment.
	long := strings.Repeat("info,", logfilter.MaxListBytes/5+1)
	var pe *logfilter.ParseError
	if err := parseErr(long); !errors.As(err, &pe) || pe.Index != -1 || !errors.Is(err, logfilter.ErrTooLong) || pe.Detail == "" ||
		err.Error() != "logfilter: "+logfilter.ErrTooLong.Error()+": "+pe.Detail {
		t.Errorf("LF-1: Parse of a %d-byte list: %v; want the whole list refused as too long, with a detail and no segment", len(long), err)
	}
}

// TestLF1_LongSegmentsAreQuotedShort: a refused segment too long to repeat
// in a log line is quoted cut, at a rune boundary, followed by its length
// in bytes. The cut's length is measured on a long ASCII segment, where
// every byte starts a rune; the others are held to it: a segment of
// exactly that length is quoted whole, one longer is cut, and a cut that
// would split a rune ends before it (before the whole segment, for bytes
// that start no rune at all).
func TestLF1_LongSegmentsAreQuotedShort(t *testing.T) {
	ascii := "bad target " + strings.Repeat("x", 200)
	limit, tail, ok := quotedPart(parseErr(ascii), ascii)
	if !ok || limit <= 0 || limit >= len(ascii) || tail != fmt.Sprintf("… (%d bytes)", len(ascii)) {
		t.Fatalf("LF-1: a %d-byte refused segment is quoted as %q + %q; want a non-empty prefix cut short and its length", len(ascii), ascii[:max(limit, 0)], tail)
	}
	for _, c := range []struct {
		what    string
		segment string
	}{
		{"exactly the cut's length", ascii[:limit]},
		{"one byte longer", ascii[:limit+1]},
		{"three-byte runes across the cut", strings.Repeat("€", limit) + " x"},
		{"two-byte runes from an odd start", "a" + strings.Repeat("é", limit) + " x"},
		{"bytes that start no rune", strings.Repeat("\x80", 2*limit)},
	} {
		want := cutAt(c.segment, limit)
		got, tail, ok := quotedPart(parseErr(c.segment), c.segment)
		wantTail := ""
		if want < len(c.segment) {
			wantTail = fmt.Sprintf("… (%d bytes)", len(c.segment))
		}
		if !ok || got != want || tail != wantTail {
			t.Errorf("LF-1: a refused segment of %s (%d bytes): quoted %d bytes then %q; want %d then %q", c.what, len(c.segment), got, tail, want, wantTail)
		}
	}
}

// cutAt is where a segment is cut: whole if it fits the limit, else at the
// last rune start at or before the limit (0 if none).
func cutAt(s string, limit int) int {
	if len(s) <= limit {
		return len(s)
	}
	for k := limit; k > 0; k-- {
		if utf8.RuneStart(s[k]) {
			return k
		}
	}
	return 0
}

// quotedPart finds the refused segment in err's message, right after
// "segment N ", and returns how many of its bytes are quoted and what
// follows the quote up to the next ": ".
func quotedPart(err error, segment string) (n int, tail string, ok bool) {
	var pe *logfilter.ParseError
	if !errors.As(err, &pe) || pe.Segment != strings.TrimSpace(segment) {
		return -1, "", false
	}
	msg := err.Error()
	head := fmt.Sprintf("logfilter: segment %d ", pe.Index)
	if !strings.HasPrefix(msg, head) {
		return -1, "", false
	}
	rest := msg[len(head):]
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return -1, "", false
	}
	un, err := strconv.Unquote(q)
	if err != nil || !strings.HasPrefix(pe.Segment, un) {
		return -1, "", false
	}
	tail, _, _ = strings.Cut(rest[len(q):], ": ")
	return len(un), tail, true
}

func parseErr(list string) error {
	_, err := logfilter.Parse(list)
	return err
}

func newErr(list string) error {
	_, err := logfilter.New(rt.Real(), list)
	return err
}

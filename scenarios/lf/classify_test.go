package lf

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// lf1Table is LF-1's classification table: the claim's cases (span
// directives, field directives, whitespace, empty segments, empty targets,
// empty levels, bad levels) and their neighbours, each with the answer the
// claim's words give.
var lf1Table = []struct {
	list  string
	plain bool
	why   string
}{
	{"", true, "no directives at all"},
	{"info", true, "a bare level"},
	{"OFF", true, "a bare level in upper case"},
	{"trace,off", true, "two bare levels"},
	{"warn,buzz_relay=debug", true, "the relay's kind of list"},
	{"buzz_relay::conn::tls=trace,buzz_relayer=off", true, "nested target and a lookalike"},
	{"  info  ,\tbuzz_relay=debug\n", true, "whitespace around segments is trimmed"},
	{"\u00a0warn\u00a0,buzz_relay=info ", true, "non-breaking spaces are whitespace too"},
	{"info,,buzz_relay=debug,", true, "empty segments are ignored"},
	{" , , ", true, "only empty segments"},
	{",", true, "one comma"},
	{"info=debug", true, "a target spelt like a level"},
	{"Buzz_Relay=Debug,x=TRACE", true, "level names in any case"},
	{"a.b-c::d_e=info", true, "'.', '-' and '_' in target words"},
	{"buzz_relay=debug,buzz_relay=error", true, "a repeated target"},
	{"é::ü=warn", true, "letters beyond ASCII"},

	{"[conn]=debug", false, "span directive"},
	{"[conn]", false, "span directive without a level"},
	{"info,[conn]=debug", false, "span directive after a plain one"},
	{"buzz_relay[conn]=debug", false, "target and span"},
	{"buzz_relay[conn]", false, "target and span, no level"},
	{"buzz_relay[]=debug", false, "empty span brackets still name a span"},
	{" buzz_relay[conn]=debug ", false, "span directive with whitespace around it"},
	{"[{peer=a}]=debug", false, "field directive"},
	{"buzz_relay[conn{peer=a}]=trace", false, "span with a field"},
	{"[conn{peer=a,shard=3}]=info,warn", false, "span with two fields (a comma inside braces)"},
	{"[conn{}]=debug", false, "an empty field list"},
	{"buzz_relay[conn{ }]=info", false, "a field list of whitespace"},
	{"[conn{peer=a, shard=3}]=info,[request{task=0}]", false, "two span directives, spaces between fields"},
	{"{peer=a}=debug", false, "a field list outside brackets"},
	{"x{a=1}=debug", false, "a brace after a target"},
	{"]=debug", false, "a stray closing bracket"},
	{"]=debug,info", false, "a stray closing bracket, then a comma"},
	{"info,x}=warn,[conn]=debug", false, "a stray closing brace between two segments"},
	{"buzz_relay=[conn]", false, "brackets in the level"},
	{"=debug", false, "empty target"},
	{" =debug", false, "empty target after trimming"},
	{"info,=warn", false, "empty target after a plain segment"},
	{"=", false, "empty target and level"},
	{"buzz_relay=", false, "empty level"},
	{"info,buzz_relay= ", false, "empty level after trimming"},
	{"buzz_relay::conn=,info", false, "empty level of a nested target"},
	{"buzz_relay", false, "a bare target"},
	{"buzz_relay=verbose", false, "bad level"},
	{"verbose", false, "a bad bare level"},
	{"warning", false, "a level misspelt"},
	{"buzz_relay=5", false, "numeric levels are not levels"},
	{"buzz_relay=infos", false, "a level with a suffix"},
	{"buzz_relay=debug=info", false, "two '='"},
	{"buzz_relay= debug", false, "whitespace inside the segment is not trimmed away"},
	{"buzz_relay =debug", false, "whitespace inside the target"},
	{"buzz relay=debug", false, "a space inside the target"},
	{"buzz:relay=debug", false, "a single ':' is not a separator"},
	{"buzz_relay::=debug", false, "empty last word of a target"},
	{"::buzz=debug", false, "empty first word of a target"},
	{"github.com/x=debug", false, "a path that is not a target"},
}

// lf1Tally is what LF-1's check counted.
type lf1Tally struct {
	smp                         claims.Sample
	table, built, pieces, plain int
	lockFree, locking, rejected int
	// The parsers' limits as LF-1's check measured them, the rows judged
	// at and around them, and how many parser calls the search took.
	limits lf1Limits
	edge   int
}

// lf1Limits are the largest plain lists both parsers accept, found from
// outside by growing lists until they are refused: a count of non-empty
// segments and a length in bytes. bounded is false for a size no refusal
// was found below its search cap (the rows then sit at the cap).
type lf1Limits struct {
	segments, bytes               int
	segmentsBounded, bytesBounded bool
	calls                         int
}

// Search caps: far beyond any limit a directive list needs (the relay's
// lists are a few segments), small enough that a parser without a limit
// is found out in a few milliseconds.
const (
	lf1SegmentCap = 1 << 18
	lf1ByteCap    = 1 << 22
)

// measureLimits finds the parsers' limits by growing two plain lists: n
// copies of "info" (n non-empty segments), and "info" padded with spaces to
// n bytes. The size is doubled until both parsers no longer accept the list,
// then bisected between the last accepted size and the first refused one.
func measureLimits() lf1Limits {
	var l lf1Limits
	accepts := func(list string) bool { l.calls++; return parsersAccept(list) }
	l.segments, l.segmentsBounded = largestAccepted(1, lf1SegmentCap, func(n int) string { return lf1Levels(n, ",") }, accepts)
	l.bytes, l.bytesBounded = largestAccepted(len("info"), lf1ByteCap, func(n int) string { return lf1Pad("info", n) }, accepts)
	return l
}

// largestAccepted is the largest n in [from, cap] for which accepts(mk(n)),
// assuming acceptance only ever stops as n grows; from-1 if mk(from) is
// refused already, and cap (bounded false) if mk(cap) is still accepted.
func largestAccepted(from, cap int, mk func(int) string, accepts func(string) bool) (int, bool) {
	if !accepts(mk(from)) {
		return from - 1, true
	}
	lo, hi := from, from*2
	for {
		if hi >= cap {
			if accepts(mk(cap)) {
				return cap, false
			}
			hi = cap
			break
		}
		if !accepts(mk(hi)) {
			break
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 { // mk(lo) accepted, mk(hi) refused
		if mid := lo + (hi-lo)/2; accepts(mk(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true
}

// lf1Levels is n bare-level segments ("info") joined by sep.
func lf1Levels(n int, sep string) string {
	segs := make([]string, n)
	for i := range segs {
		segs[i] = "info"
	}
	return strings.Join(segs, sep)
}

// lf1Pad pads list with spaces to n bytes (list itself if it is longer).
func lf1Pad(list string, n int) string {
	return list + strings.Repeat(" ", max(0, n-len(list)))
}

// lf1Mixed is n non-empty plain segments of both plain kinds, with empty
// and blank segments among them (which do not count).
func lf1Mixed(n int) string {
	var b strings.Builder
	b.WriteString(" ,")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		if i%2 == 0 {
			b.WriteString("warn")
		} else {
			b.WriteString(" buzz_relay::conn=debug")
		}
		if i%5 == 0 {
			b.WriteString(", ,")
		}
	}
	b.WriteString(",,")
	return b.String()
}

// lf1EdgeRows are plain lists at the measured limits, one below and one
// beyond each: a list at a limit is plain (both parsers accept it, and its
// segments are plain), one beyond it is not. Which is which the reference
// decides; the rows only make sure the classification is asked exactly
// where a limit made inclusive or exclusive would answer otherwise.
func lf1EdgeRows(l lf1Limits) []struct{ list, why string } {
	var rows []struct{ list, why string }
	add := func(list, why string) { rows = append(rows, struct{ list, why string }{list, why}) }
	for _, d := range []int{-1, 0, 1} {
		n, b := l.segments+d, l.bytes+d
		at := fmt.Sprintf("%+d of the measured limit", d)
		if n >= 0 {
			add(lf1Levels(n, ","), fmt.Sprintf("%d bare levels: %s", n, at))
			add(lf1Levels(n, ", ,")+",", fmt.Sprintf("%d bare levels with empty segments between: %s", n, at))
			add(lf1Mixed(n), fmt.Sprintf("%d plain segments of both kinds with empty ones among them: %s", n, at))
			// Both limits at once, when a list of the most segments fits.
			if short := lf1Levels(n, ","); len(short) <= l.bytes {
				add(lf1Pad(short, l.bytes), fmt.Sprintf("%d bare levels padded to the byte limit: %s", n, at))
			}
		}
		if b >= len("info") {
			add(lf1Pad("info", b), fmt.Sprintf("a level padded with spaces to %d bytes: %s", b, at))
			add(lf1Pad(" ,buzz_relay=debug ,, warn,", b), fmt.Sprintf("two plain segments padded to %d bytes: %s", b, at))
			pad := strings.Repeat(" ", max(0, b-len("info,buzz_relay=debug")))
			add("info,"+pad+"buzz_relay=debug", fmt.Sprintf("spaces inside a list of %d bytes: %s", b, at))
		}
	}
	return rows
}

// refSegments is the reference reading of a list's segments: it is cut at
// each comma outside [...] and {...}, a closing bracket or brace with none
// open being an ordinary character; each segment is trimmed, and empty
// ones keep their place.
func refSegments(list string) []string {
	var segs []string
	depth, start := 0, 0
	for i := 0; i <= len(list); i++ {
		switch {
		case i == len(list) || (list[i] == ',' && depth == 0):
			segs = append(segs, strings.TrimSpace(list[start:i]))
			start = i + 1
		case list[i] == '[' || list[i] == '{':
			depth++
		case (list[i] == ']' || list[i] == '}') && depth > 0:
			depth--
		}
	}
	return segs
}

// lf1Accepted are the table's lists that are not plain and that
// EnvFilter's directive grammar (tracing-subscriber 0.3) accepts: the
// span-aware filter must take each, not refuse it. A refused list goes to
// neither path, so its class alone does not tell a parser that rejects a
// valid form (an empty field list, a comma between fields) from one that
// reads it.
var lf1Accepted = map[string]bool{
	"[conn]=debug": true, "[conn]": true, "info,[conn]=debug": true, "buzz_relay[conn]=debug": true,
	"buzz_relay[conn]": true, " buzz_relay[conn]=debug ": true, "[{peer=a}]=debug": true,
	"buzz_relay[conn{peer=a}]=trace": true, "[conn{peer=a,shard=3}]=info,warn": true,
	"[conn{}]=debug": true, "buzz_relay[conn{ }]=info": true, "[conn{peer=a, shard=3}]=info,[request{task=0}]": true,
}

// judge classifies one list: the reference's answer (and the expected one,
// when the list's construction gives it), IsPlain's, and the path New took,
// observed from outside (locks created and taken) and as Kind says.
func (tl *lf1Tally) judge(list string, want *bool, why string) {
	smp := &tl.smp
	smp.Of++
	wrong := onceWrong(smp, fmt.Sprintf("list %q (%s): ", list, why))
	ref := refPlain(list)
	if ref {
		tl.plain++
	}
	if want != nil && *want != ref {
		wrong("the reference says plain=%v, the claim's reading %v", ref, *want)
	}
	if got := logfilter.IsPlain(list); got != ref {
		wrong("IsPlain says %v, the reference %v", got, ref)
	}
	path, kind, err := observePath(list)
	if f, ferr := logfilter.New(rt.Real(), list); ferr == nil {
		// The canonical form a filter prints is a list that reads back to
		// the same directives, one directive a segment.
		canon := f.String()
		g, gerr := logfilter.New(rt.Real(), canon)
		switch {
		case gerr != nil:
			wrong("its canonical form %q is refused: %v", canon, gerr)
		case !reflect.DeepEqual(g.Directives(), f.Directives()):
			wrong("its canonical form %q reads as the directives %v, the list as %v", canon, g.Directives(), f.Directives())
		case ref && !logfilter.IsPlain(canon):
			// The form a plain list's filter prints must take the same path.
			wrong("plain, but its canonical form %q is not", canon)
		}
	}
	_, saErr := logfilter.NewSpanAware(rt.Real(), list)
	switch {
	case err == nil && path == pathLockFree:
		tl.lockFree++
	case err == nil && path == pathLocking:
		tl.locking++
	case err != nil:
		tl.rejected++
	}
	if ref {
		switch {
		case err != nil:
			wrong("plain, but New rejected it: %v", err)
		case path != pathLockFree || kind != logfilter.KindTargets:
			wrong("plain, but New's filter took the %s path (observed: %s)", kind, path)
		}
		return
	}
	// A refused list's error names one of its segments by its place.
	var pe *logfilter.ParseError
	if errors.As(err, &pe) && pe.Index >= 0 {
		if segs := refSegments(list); pe.Index >= len(segs) || segs[pe.Index] != pe.Segment {
			wrong("New's error names segment %d %q; the list's segments are %q", pe.Index, pe.Segment, segs)
		}
	}
	// Not plain: New is the span-aware filter, its result and error alike.
	switch {
	case lf1Accepted[list] && err != nil:
		wrong("EnvFilter's grammar accepts it, New rejected it: %v", err)
	case errText(err) != errText(saErr):
		wrong("not plain: New's error %q is not the span-aware filter's %q", errText(err), errText(saErr))
	case err == nil && (path != pathLocking || kind != logfilter.KindSpanAware):
		wrong("not plain, but New's filter took the %s path (observed: %s)", kind, path)
	}
}

// TestLF1_Classification checks LF-1: a directive list filters through the
// lock-free target table exactly when it is plain. The lists come from the
// table, from rows at the parsers' limits (the largest segment count and
// byte length both parsers accept, measured by growing lists, one below and
// one beyond), and from two generators. These build lists from segments of
// known kind, or glue them from the characters that matter. A reference
// written from the claim's words classifies each list. The class is
// compared with IsPlain and with the path New took, observed from outside
// the package: New on a counting runtime, then a span entered and exited.
// The target path creates no lock and takes none; the span-aware path
// creates one and takes a read lock per enter and per exit. Lists that are
// not plain must get exactly what the span-aware filter gives (the same
// error for those it rejects).
func TestLF1_Classification(t *testing.T) {
	var tl lf1Tally
	defer func() { tl.report(t) }()
	for _, c := range lf1Table {
		tl.table++
		tl.judge(c.list, &c.plain, c.why)
	}
	// At the parsers' limits, measured from outside: the table's lists
	// are all short, and a limit made inclusive shows only at a list of
	// exactly the largest size the parsers accept.
	tl.limits = measureLimits()
	for _, r := range lf1EdgeRows(tl.limits) {
		tl.edge++
		tl.judge(r.list, nil, r.why)
	}
	seen := map[string]bool{}
	// Lists from segments of known kind: plain exactly when every segment
	// is of a plain kind.
	rapid.Check(t, func(rq *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(rq, "segments")
		onlyPlain := rapid.Bool().Draw(rq, "only plain kinds")
		segs := make([]string, n)
		plain := true
		for i := range segs {
			seg, ok := lf1Segment(rq, onlyPlain)
			segs[i], plain = seg, plain && ok
		}
		list := strings.Join(segs, ",")
		if seen[list] {
			return
		}
		seen[list] = true
		tl.built++
		wrong := tl.smp.Wrong
		tl.judge(list, &plain, "generated from segments")
		if tl.smp.Wrong > wrong {
			rq.Fatalf("%s", tl.smp.Witness)
		}
	})
	// Lists glued from pieces, most near the boundary between plain and
	// not: only the reference says what is right.
	pieces := []string{
		"info", "DEBUG", "Trace", "warn", "error", "off", "verbose", "5", "",
		"buzz_relay", "buzz_relay::conn", "buzz_relayer", "a", "a::", ":", "::", "x.y-z",
		"=", "==", "[", "]", "[conn]", "{", "}", "{peer=a}", ",", ",,", " ", "\t", "\u00a0", "é", "²", "/",
	}
	rapid.Check(t, func(rq *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(0, 12).Draw(rq, "pieces") {
			b.WriteString(rapid.SampledFrom(pieces).Draw(rq, "piece"))
		}
		list := b.String()
		if seen[list] {
			return
		}
		seen[list] = true
		tl.pieces++
		wrong := tl.smp.Wrong
		tl.judge(list, nil, "glued from pieces")
		if tl.smp.Wrong > wrong {
			rq.Fatalf("%s", tl.smp.Witness)
		}
	})
}

// lf1Segment draws one segment of a known kind (of a plain kind, with
// onlyPlain) and says whether the kind is plain.
func lf1Segment(t *rapid.T, onlyPlain bool) (string, bool) {
	level := rapid.SampledFrom([]string{"trace", "debug", "info", "warn", "error", "off"}).Draw(t, "level")
	switch rapid.IntRange(0, 2).Draw(t, "case") {
	case 1:
		level = strings.ToUpper(level)
	case 2:
		level = strings.ToUpper(level[:1]) + level[1:]
	}
	word := rapid.SampledFrom([]string{"buzz_relay", "conn", "tls", "buzz_relayer", "x.y-z", "é", "a1"})
	target := strings.Join(rapid.SliceOfN(word, 1, 3).Draw(t, "words"), "::")
	pad := func(s string) string {
		ws := rapid.SampledFrom([]string{"", " ", "\t", "\n", "  "})
		return ws.Draw(t, "before") + s + ws.Draw(t, "after")
	}
	kinds := []struct {
		seg   string
		plain bool
	}{
		{level, true},
		{target + "=" + level, true},
		{"", true}, // an empty segment
		{target + "[conn]=" + level, false},
		{"[" + rapid.SampledFrom([]string{"conn", "request", ""}).Draw(t, "span") + "]=" + level, false},
		{target + "[conn{peer=a}]=" + level, false},
		{"[{peer=a}]=" + level, false},
		{target + "=", false},        // an empty level
		{"=" + level, false},         // an empty target
		{target + "=verbose", false}, // a bad level
		{target + "=" + level + "=" + level, false},
		{target, false},                // a bare target
		{target + " =" + level, false}, // whitespace inside
		{target + ":=" + level, false},
	}
	n := len(kinds)
	if onlyPlain {
		n = 3 // the plain kinds come first
	}
	k := kinds[rapid.IntRange(0, n-1).Draw(t, "kind")]
	return pad(k.seg), k.plain
}

func (tl *lf1Tally) report(t *testing.T) {
	t.Helper()
	smp := tl.smp
	verdict := findings.Holds
	if smp.Wrong > 0 {
		verdict = findings.Violated
		t.Errorf("LF-1: %d of %d lists misclassified or misrouted; first: %s", smp.Wrong, smp.Of, smp.Witness)
	}
	findings.Report(t, findings.Record{
		ID: "LF-1", Verdict: verdict,
		Measured: fmt.Sprintf("%d of %d directive lists (%d from the table, %d at the parsers' limits, %d built from segments of known kind, %d glued from pieces; %d plain by the reference) classified or routed otherwise than the reference says; observed from outside, New's filter was lock-free for %d lists, locking for %d, and %d were rejected as the span-aware parser rejects them; %s",
			smp.Wrong, smp.Of, tl.table, tl.edge, tl.built, tl.pieces, tl.plain, tl.lockFree, tl.locking, tl.rejected, tl.limits),
		Bound: "0 wrong", Value: float64(smp.Wrong), Seeds: 1, Witness: smp.Witness,
		Note: "deterministic table plus pgregory.net/rapid generators, no simulator; the path is observed by a counting rt.Runtime (locks created, read locks per span enter and exit) and compared with Kind()",
	})
}

// String says what the limit search found, for LF-1's record.
func (l lf1Limits) String() string {
	size := func(n int, bounded bool, unit string, cap int) string {
		if !bounded {
			return fmt.Sprintf("every list up to %d %s (no limit found below the search cap)", cap, unit)
		}
		return fmt.Sprintf("at most %d %s", n, unit)
	}
	return fmt.Sprintf("measured by growing plain lists (%d parser calls), both parsers accept %s and %s; lists at, one below and one beyond each were classified",
		l.calls, size(l.segments, l.segmentsBounded, "non-empty segments", lf1SegmentCap), size(l.bytes, l.bytesBounded, "bytes", lf1ByteCap))
}

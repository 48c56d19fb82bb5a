package logfilter_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The reference classifier of LF-1, written from the claim's words and
// sharing no code with the package. A list is plain exactly when every
// non-empty segment, trimmed, is `level` or `target=level` with a known,
// non-empty level, and no segment names a span or a field. A target is words
// of letters, digits, '_', '-', '.' joined by "::". The list bounds are the
// package's documented ones.
var (
	refLevel       = `(?i:trace|debug|info|warn|error|off)`
	refPlainSeg    = regexp.MustCompile(`^(?:` + refLevel + `|[\p{L}\p{Nd}_.\-]+(?:::[\p{L}\p{Nd}_.\-]+)*=` + refLevel + `)$`)
	refMaxBytes    = 64 << 10
	refMaxSegments = 1024
)

func refIsPlain(list string) bool {
	if len(list) > refMaxBytes {
		return false
	}
	n := 0
	for _, seg := range strings.Split(list, ",") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		n++
		if n > refMaxSegments || !refPlainSeg.MatchString(seg) {
			return false
		}
	}
	return true
}

// LF-1: the classification table, against the reference and against the
// expected answer, and the path New takes for each list.
func TestLF1Classification(t *testing.T) {
	for _, c := range []struct {
		list  string
		plain bool
		why   string
	}{
		{"", true, "no directives at all"},
		{"info", true, "a bare level"},
		{"warn,buzz_relay=debug", true, "the relay's kind of list"},
		{"buzz_relay::conn=trace,buzz_relayer=OFF", true, "nested target, any case"},
		{"  info  ,\tbuzz_relay=debug\n", true, "whitespace around segments is trimmed"},
		{"info,,buzz_relay=debug,", true, "empty segments are ignored"},
		{" , , ", true, "only empty segments"},
		{"info=debug", true, "a target that is spelt like a level"},
		{"INFO,Buzz_Relay=Debug", true, "level names in any case"},

		{"[conn]=debug", false, "span directive"},
		{"info,[conn]=debug", false, "span directive after a plain one"},
		{"buzz_relay[conn]=debug", false, "target and span"},
		{"buzz_relay[conn{peer=a}]=trace", false, "span with fields"},
		{"[{peer=a}]=debug", false, "field directive"},
		{"buzz_relay[]=debug", false, "empty span brackets still name a span"},
		{"x{a=1}=debug", false, "a brace, even malformed"},
		{"]=debug", false, "a stray bracket"},
		{"=debug", false, "empty target"},
		{" =debug", false, "empty target after trimming"},
		{"buzz_relay=", false, "empty level"},
		{"info,buzz_relay= ", false, "empty level after trimming"},
		{"buzz_relay", false, "a bare target"},
		{"buzz_relay=verbose", false, "bad level"},
		{"buzz_relay=5", false, "numeric levels are not levels here"},
		{"buzz_relay= debug", false, "whitespace inside the segment is not trimmed away"},
		{"buzz_relay =debug", false, "whitespace inside the target"},
		{"buzz_relay=debug=info", false, "two '='"},
		{"buzz:relay=debug", false, "a single ':' is not a separator"},
		{"buzz_relay::=debug", false, "empty last segment of a target"},
		{"github.com/x=debug", false, "a path that is not a target"},
		{"=", false, "empty target and level"},
	} {
		assert.Equal(t, c.plain, refIsPlain(c.list), "reference on %q (%s)", c.list, c.why)
		assert.Equal(t, c.plain, logfilter.IsPlain(c.list), "IsPlain(%q) (%s)", c.list, c.why)
		f, err := logfilter.New(rt.Real(), c.list)
		if c.plain {
			if assert.NoError(t, err, "%q", c.list) {
				assert.Equal(t, logfilter.KindTargets, f.Kind(), "%q (%s)", c.list, c.why)
			}
		} else if err == nil {
			assert.Equal(t, logfilter.KindSpanAware, f.Kind(), "%q (%s) must stay on the span-aware filter", c.list, c.why)
		}
	}
}

// LF-1 over generated lists: segments assembled from the pieces that
// matter (levels, targets, '=', brackets, braces, whitespace, commas), so
// most lists sit near the boundary between plain and not plain.
func TestLF1ClassificationRapid(t *testing.T) {
	pieces := []string{
		"info", "DEBUG", "Trace", "warn", "error", "off", "verbose", "5", "",
		"buzz_relay", "buzz_relay::conn", "buzz_relayer", "a", "a::", ":", "::", "x.y-z",
		"=", "==", "[", "]", "[conn]", "{", "}", "{peer=a}", ",", ",,", " ", "\t", "\u00a0", "é", "²", "/",
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "n")
		var b strings.Builder
		for range n {
			b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
		}
		list := b.String()
		want := refIsPlain(list)
		if got := logfilter.IsPlain(list); got != want {
			t.Fatalf("IsPlain(%q) = %v, reference says %v", list, got, want)
		}
		f, err := logfilter.New(rt.Real(), list)
		switch {
		case want && err != nil:
			t.Fatalf("plain list %q: %v", list, err)
		case err == nil && (f.Kind() == logfilter.KindTargets) != want:
			t.Fatalf("list %q (plain: %v) took the %v path", list, want, f.Kind())
		}
	})
}

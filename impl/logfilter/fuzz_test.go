package logfilter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/impl/logfilter"
)

// FuzzParse: no input panics any parser or constructor, and every error is a
// *ParseError with a bounded message. A successful parse round-trips through
// its canonical String form. A plain list is read the same by both parsers
// (the premise of LF-1 and LF-2). Inputs it ever found are kept in
// testdata/fuzz/FuzzParse and replayed by every go test run.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "info", ",, , ", "warn,buzz_relay=debug", "buzz_relay::conn=trace,buzz_relayer=off",
		"buzz_relay=", "=debug", "=", "buzz_relay", "INFO,Buzz=Debug",
		"[conn]=debug", "buzz_relay[conn{peer=a,shard=3}]=trace", "[{peer=a}]", "[]", "x[{}]=info",
		// the bad inputs of TestParseErrors
		"buzz_relay=verbose", "[conn=debug,info", "x[conn{peer=a]=debug", "x[conn{peer=a}",
		"[conn{peer}]=debug", "[{a=1=2}]", "x=debug=info", "buzz:relay=debug", "x]=debug", "}{][",
		"\xff=debug", "a::b::=info", strings.Repeat("[", 100),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		ds, err := logfilter.Parse(list)
		checkError(t, list, err)
		if err == nil {
			canon := ds.String()
			again, err := logfilter.Parse(canon)
			if err != nil {
				t.Fatalf("Parse(%q) = %v, but its canonical form %q does not parse: %v", list, ds, canon, err)
			}
			if !equalDirectives(ds, again) {
				t.Fatalf("Parse(%q) = %#v; canonical form %q reads back as %#v", list, ds, canon, again)
			}
			if again.String() != canon {
				t.Fatalf("canonical form is not a fixed point: %q -> %q", canon, again.String())
			}
		}

		ts, terr := logfilter.ParseTargets(list)
		checkError(t, list, terr)
		if terr == nil {
			again, err := logfilter.ParseTargets(ts.String())
			if err != nil || !equalDirectives(ts, again) {
				t.Fatalf("ParseTargets(%q) = %v does not round-trip through %q: %v %v", list, ts, ts.String(), again, err)
			}
		}

		if logfilter.IsPlain(list) {
			if err != nil || terr != nil {
				t.Fatalf("plain list %q: Parse error %v, ParseTargets error %v", list, err, terr)
			}
			if !equalDirectives(ds, ts) {
				t.Fatalf("plain list %q read differently: Parse %v, ParseTargets %v", list, ds, ts)
			}
		}

		flt, nerr := logfilter.New(nil, list)
		checkError(t, list, nerr)
		if nerr == nil && (flt.Kind() == logfilter.KindTargets) != logfilter.IsPlain(list) {
			t.Fatalf("list %q: New chose %v, IsPlain says %v", list, flt.Kind(), logfilter.IsPlain(list))
		}
	})
}

func checkError(t *testing.T, list string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *logfilter.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("list %q: error %T is not a *ParseError: %v", list, err, err)
	}
	if msg := err.Error(); len(msg) > 600 {
		t.Fatalf("list %q: error message of %d bytes: %.200s", list, len(msg), msg)
	}
}

// equalDirectives compares directive lists, treating nil and empty field
// lists as equal.
func equalDirectives(a, b logfilter.Directives) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Target != y.Target || x.Span != y.Span || x.Level != y.Level || len(x.Fields) != len(y.Fields) {
			return false
		}
		for j := range x.Fields {
			if x.Fields[j] != y.Fields[j] {
				return false
			}
		}
	}
	return true
}

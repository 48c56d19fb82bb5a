package logfilter_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/logfilter"
)

func TestParseAccepts(t *testing.T) {
	lt := logfilter.LevelTrace
	for _, c := range []struct {
		list string
		want logfilter.Directives
	}{
		{"", logfilter.Directives{}},
		{" , ,, ", logfilter.Directives{}},
		{"info", logfilter.Directives{{Level: slog.LevelInfo}}},
		{"TRACE,Off", logfilter.Directives{{Level: lt}, {Level: logfilter.LevelOff}}},
		{" buzz_relay::conn=Debug ", logfilter.Directives{{Target: "buzz_relay::conn", Level: slog.LevelDebug}}},
		{"buzz_relay", logfilter.Directives{{Target: "buzz_relay", Level: lt}}},
		{"buzz_relay=", logfilter.Directives{{Target: "buzz_relay", Level: lt}}},
		{"=debug", logfilter.Directives{{Level: slog.LevelDebug}}},
		{"[conn]=debug", logfilter.Directives{{Span: "conn", Level: slog.LevelDebug}}},
		{"buzz_relay[conn]", logfilter.Directives{{Target: "buzz_relay", Span: "conn", Level: lt}}},
		{"buzz_relay[ conn ]=warn", logfilter.Directives{{Target: "buzz_relay", Span: "conn", Level: slog.LevelWarn}}},
		{"buzz_relay[conn{peer=a}]=trace", logfilter.Directives{{Target: "buzz_relay", Span: "conn",
			Fields: []logfilter.Field{{Name: "peer", Value: "a"}}, Level: lt}}},
		{"[{peer = a b, shard=3}]=info,warn", logfilter.Directives{
			{Fields: []logfilter.Field{{Name: "peer", Value: "a b"}, {Name: "shard", Value: "3"}}, Level: slog.LevelInfo},
			{Level: slog.LevelWarn}}},
		{"[]=error", logfilter.Directives{{Level: slog.LevelError}}},
		{"x[{}]=error", logfilter.Directives{{Target: "x", Level: slog.LevelError}}},
		{"info=debug", logfilter.Directives{{Target: "info", Level: slog.LevelDebug}}},
	} {
		got, err := logfilter.Parse(c.list)
		require.NoError(t, err, "list %q", c.list)
		assert.Equal(t, c.want, got, "list %q", c.list)
		// The canonical form reads back as the same directives.
		again, err := logfilter.Parse(got.String())
		require.NoError(t, err, "canonical form %q of %q", got.String(), c.list)
		assert.Equal(t, got, again, "canonical form %q of %q", got.String(), c.list)
	}
}

func TestDirectiveString(t *testing.T) {
	ds, err := logfilter.Parse("INFO, buzz_relay=, [conn{peer=a,shard=2}]=Debug, x[]=off")
	require.NoError(t, err)
	assert.Equal(t, "info,buzz_relay=trace,[conn{peer=a,shard=2}]=debug,x=off", ds.String())
	assert.True(t, ds[2].Dynamic())
	assert.False(t, ds[1].Dynamic())
}

// Every malformed list is an error that names the segment (index and
// text) and says what is wrong; none panics.
func TestParseErrors(t *testing.T) {
	long := "buzz_relay=" + strings.Repeat("v", 500)
	for _, c := range []struct {
		list    string
		kind    error
		index   int
		segment string // quoted, as the message shows it
		detail  string
	}{
		{"info,buzz_relay=verbose", logfilter.ErrBadLevel, 1, `"buzz_relay=verbose"`, `"verbose"`},
		{"buzz_relay=5", logfilter.ErrBadLevel, 0, `"buzz_relay=5"`, `"5"`},
		{"buzz_relay= debug", logfilter.ErrBadLevel, 0, `"buzz_relay= debug"`, `" debug"`},
		{"[conn]=loud", logfilter.ErrBadLevel, 0, `"[conn]=loud"`, `"loud"`},
		{",, [conn=debug", logfilter.ErrUnclosedBracket, 2, `"[conn=debug"`, "no ']'"},
		{"[conn=debug,info", logfilter.ErrUnclosedBracket, 0, `"[conn=debug,info"`, "comma inside"},
		{"x[conn{peer=a]=debug", logfilter.ErrUnclosedBrace, 0, `"x[conn{peer=a]=debug"`, "no '}'"},
		{"x[conn{peer=a", logfilter.ErrUnclosedBrace, 0, `"x[conn{peer=a"`, "no '}'"},
		{"x[conn{peer=a}", logfilter.ErrUnclosedBracket, 0, `"x[conn{peer=a}"`, "after the field list"},
		{"info,[conn{peer}]=debug", logfilter.ErrFieldValue, 1, `"[conn{peer}]=debug"`, `"peer"`},
		{"[{peer=}]=debug", logfilter.ErrFieldValue, 0, `"[{peer=}]=debug"`, "empty value"},
		{"[{a=1,,b=2}]=debug", logfilter.ErrSyntax, 0, `"[{a=1,,b=2}]=debug"`, "empty field"},
		{"[{a=1=2}]=debug", logfilter.ErrSyntax, 0, `"[{a=1=2}]=debug"`, "more than one '='"},
		{"[{a b=1}]=debug", logfilter.ErrBadName, 0, `"[{a b=1}]=debug"`, `"a b"`},
		{"[co nn]=debug", logfilter.ErrBadName, 0, `"[co nn]=debug"`, `"co nn"`},
		{"x{a=1}=debug", logfilter.ErrSyntax, 0, `"x{a=1}=debug"`, "inside [...]"},
		{"x]=debug", logfilter.ErrSyntax, 0, `"x]=debug"`, `']'`},
		{"[conn]x=debug", logfilter.ErrSyntax, 0, `"[conn]x=debug"`, `"x=debug"`},
		{"[a[b]]=debug", logfilter.ErrSyntax, 0, `"[a[b]]=debug"`, "unexpected '['"},
		{"[a}=debug", logfilter.ErrSyntax, 0, `"[a}=debug"`, "'}'"},
		{"x=debug=info", logfilter.ErrSyntax, 0, `"x=debug=info"`, "one '='"},
		{"buzz relay=debug", logfilter.ErrBadTarget, 0, `"buzz relay=debug"`, `"buzz relay"`},
		{"buzz:relay=debug", logfilter.ErrBadTarget, 0, `"buzz:relay=debug"`, `"buzz:relay"`},
		{"buzz_relay::=debug", logfilter.ErrBadTarget, 0, `"buzz_relay::=debug"`, `"buzz_relay::"`},
		{"github.com/x", logfilter.ErrBadTarget, 0, `"github.com/x"`, "not a level"},
		{long, logfilter.ErrBadLevel, 0, `"buzz_relay=vvvvvvvvvvvvvvvvvvvvvvvvvvvvv"… (511 bytes)`, "… (500 bytes)"},
	} {
		ds, err := logfilter.Parse(c.list)
		require.Error(t, err, "list %q parsed as %v", c.list, ds)
		assert.ErrorIs(t, err, c.kind, "list %q", c.list)
		var pe *logfilter.ParseError
		require.True(t, errors.As(err, &pe), "list %q: %T", c.list, err)
		assert.Equal(t, c.index, pe.Index, "list %q", c.list)
		msg := err.Error()
		assert.Contains(t, msg, "segment ", "list %q: %s", c.list, msg)
		assert.Contains(t, msg, c.segment, "list %q: %s", c.list, msg)
		assert.Contains(t, msg, c.kind.Error(), "list %q: %s", c.list, msg)
		assert.Contains(t, msg, c.detail, "list %q: %s", c.list, msg)
		assert.Less(t, len(msg), 400, "list %q: message too long: %s", c.list, msg)

		// The constructor reports the same error for lists that are not
		// plain, which all of these are.
		assert.False(t, logfilter.IsPlain(c.list), "list %q", c.list)
		_, nerr := logfilter.New(nil, c.list)
		assert.Equal(t, err.Error(), nerr.Error(), "list %q", c.list)
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := logfilter.New(nil, "info, buzz_relay=verbose")
	require.Error(t, err)
	assert.Equal(t, `logfilter: segment 1 "buzz_relay=verbose": unknown level (want trace, debug, info, warn, error or off): "verbose"`, err.Error())
}

func TestParseBounds(t *testing.T) {
	// Exactly at the limits: accepted.
	atLimit := strings.Repeat("info,", logfilter.MaxSegments-1) + "info"
	_, err := logfilter.Parse(atLimit)
	require.NoError(t, err)
	big := strings.Repeat(" ", logfilter.MaxListBytes-4) + "info"
	_, err = logfilter.Parse(big)
	require.NoError(t, err)

	for _, parse := range []func(string) (logfilter.Directives, error){logfilter.Parse, logfilter.ParseTargets} {
		_, err = parse(big + " ")
		require.ErrorIs(t, err, logfilter.ErrTooLong)
		var pe *logfilter.ParseError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, -1, pe.Index)
		assert.Equal(t, "logfilter: directive list too long: 65537 bytes, the limit is 65536", err.Error())

		_, err = parse(atLimit + ",,debug")
		require.ErrorIs(t, err, logfilter.ErrTooManySegments)
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, logfilter.MaxSegments+1, pe.Index, "the first segment over the limit (empty ones count in the index)")
		assert.Contains(t, err.Error(), `"debug"`)
	}
	assert.False(t, logfilter.IsPlain(big+" "), "an oversize list is not plain")
	assert.False(t, logfilter.IsPlain(atLimit+",info"), "too many segments: not plain")
	assert.True(t, logfilter.IsPlain(atLimit+",,"), "empty segments do not count")
	_, err = logfilter.New(nil, big+" ")
	assert.ErrorIs(t, err, logfilter.ErrTooLong)
}

func TestParseTargets(t *testing.T) {
	got, err := logfilter.ParseTargets(" info, buzz_relay=, buzz_relay::conn , other=WARN,,")
	require.NoError(t, err)
	assert.Equal(t, logfilter.Directives{
		{Level: slog.LevelInfo},
		{Target: "buzz_relay", Level: slog.LevelError}, // Targets reads an empty level as ERROR
		{Target: "buzz_relay::conn", Level: logfilter.LevelTrace},
		{Target: "other", Level: slog.LevelWarn},
	}, got)

	for _, c := range []struct {
		list string
		kind error
	}{
		{"[conn]=debug", logfilter.ErrSpanDirective},
		{"x[{a=1,b=2}]=debug", logfilter.ErrSpanDirective},
		{"=debug", logfilter.ErrBadTarget},
		{"x=verbose", logfilter.ErrBadLevel},
		{"x=debug=info", logfilter.ErrSyntax},
		{"a b=info", logfilter.ErrBadTarget},
	} {
		_, err := logfilter.ParseTargets(c.list)
		assert.ErrorIs(t, err, c.kind, "list %q", c.list)
		_, err = logfilter.NewTargets(c.list)
		assert.ErrorIs(t, err, c.kind, "list %q", c.list)
	}
}

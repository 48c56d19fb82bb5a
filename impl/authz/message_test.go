package authz

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIDRoundTrip(t *testing.T) {
	id := NewID('c', 0x0102030405060708)
	s := id.String()
	assert.Equal(t, "63000000-0000-0000-0102-030405060708", s)
	back, err := ParseID(s)
	require.NoError(t, err)
	assert.Equal(t, id, back)
	assert.Equal(t, -1, Compare(NewID('c', 1), NewID('c', 2)))
	for _, bad := range []string{"", "63000000-0000-0000-0102-03040506070", "63000000x0000-0000-0102-030405060708", "g3000000-0000-0000-0102-030405060708"} {
		_, err := ParseID(bad)
		assert.Error(t, err, bad)
	}
}

// validMessages holds one message of each kind, every field the kind needs.
var validMessages = []Message{
	{Kind: KindMembership, CommunityID: NewID('k', 1), UserID: NewID('u', 2), ChannelID: NewID('c', 3)},
	{Kind: KindAccessibleAll, CommunityID: NewID('k', 1)},
	{Kind: KindVisibility, CommunityID: NewID('k', 1), ChannelID: NewID('c', 3)},
	{Kind: KindChannelDeleted, CommunityID: NewID('k', 1), ChannelID: NewID('c', 3)},
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range validMessages {
		b, err := m.Encode()
		require.NoError(t, err)
		got, err := DecodeMessage(b)
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	// MS-9: membership messages keep channel_id on the wire.
	b, err := validMessages[0].Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"channel_id":"63000000-0000-0000-0000-000000000003"`)
}

// Wire forms other than Encode's that are still exactly one valid object.
func TestDecodeAcceptsValidVariants(t *testing.T) {
	const k, u, c = `"6b000000-0000-0000-0000-000000000001"`, `"75000000-0000-0000-0000-000000000002"`, `"63000000-0000-0000-0000-000000000003"`
	membership := Message{Kind: KindMembership, CommunityID: NewID('k', 1), UserID: NewID('u', 2), ChannelID: NewID('c', 3)}
	for name, tc := range map[string]struct {
		raw  string
		want Message
	}{
		"whitespace around and inside": {" \t\r\n{ \"kind\" : \"accessible_all\" ,\n\"community_id\":" + k + " }\n\t ", validMessages[1]},
		"keys in another order":        {`{"channel_id":` + c + `,"user_id":` + u + `,"community_id":` + k + `,"kind":"membership"}`, membership},
		"escaped key and value":        {`{"\u006bind":"accessible_all","community_id":"6b000000-0000-0000-0000-00000000000\u0031"}`, validMessages[1]},
		"upper-case hex UUID":          {`{"kind":"accessible_all","community_id":"6B000000-0000-0000-0000-000000000001"}`, validMessages[1]},
	} {
		got, err := DecodeMessage([]byte(tc.raw))
		if assert.NoError(t, err, name) {
			assert.Equal(t, tc.want, got, name)
		}
	}
}

// checkDecodeError asserts the properties every DecodeMessage error has: the
// package prefix, a bounded length, no double space (an empty %s), and none
// of the input's bulk.
func checkDecodeError(t testing.TB, raw []byte, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%.64q was accepted", raw)
	}
	s := err.Error()
	if !strings.HasPrefix(s, "authz: ") {
		t.Errorf("error %q lacks the authz: prefix", s)
	}
	if len(s) >= maxErrorBytes { // fatal: a caller's assertion would print it whole
		t.Fatalf("error is %d bytes (limit %d): %.300q", len(s), maxErrorBytes, s)
	}
	if strings.Contains(unquoted(s), "  ") {
		t.Errorf("error %q has a double space", s)
	}
}

// unquoted drops the Go-quoted parts ("...", '.') of an error, which quote
// the input and may hold any spaces; what is left is the error's own text.
func unquoted(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		if s[0] == '"' || s[0] == '\'' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				b.WriteString("<q>")
				s = s[len(q):]
				continue
			}
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return b.String()
}

// maxErrorBytes bounds every DecodeMessage error, whatever the input.
const maxErrorBytes = 256

const (
	goodCommunity = `"community_id":"6b000000-0000-0000-0000-000000000001"`
	goodAll       = `{"kind":"accessible_all",` + goodCommunity + `}`
)

// malformedMessages maps each bad input to the exact error DecodeMessage
// gives for it. The fuzz target is seeded with all of them.
var malformedMessages = []struct{ name, raw, want string }{
	// Trailing data: json.Decoder stops after the first value, and More is
	// false before '}' and ']'.
	{"trailing }", goodAll + `}`, `authz: malformed invalidation message: trailing data after the object at byte 79`},
	{"trailing ]", goodAll + `]`, `authz: malformed invalidation message: trailing data after the object at byte 79`},
	{"trailing object", goodAll + ` {}`, `authz: malformed invalidation message: trailing data after the object at byte 80`},
	{"trailing word", goodAll + "\nx", `authz: malformed invalidation message: trailing data after the object at byte 80`},
	{"trailing NUL", goodAll + "\x00", `authz: malformed invalidation message: trailing data after the object at byte 79`},
	// Key names are exact (encoding/json matches them in any case).
	{"upper-case kind", `{"KIND":"accessible_all",` + goodCommunity + `}`, `authz: malformed invalidation message: unknown field "KIND"`},
	{"mixed-case community_id", `{"kind":"accessible_all","Community_ID":"6b000000-0000-0000-0000-000000000001"}`, `authz: malformed invalidation message: unknown field "Community_ID"`},
	{"kelvin-sign kind", `{"\u212aind":"accessible_all",` + goodCommunity + `}`, "authz: malformed invalidation message: unknown field \"\u212aind\""},
	{"unknown field", `{"kind":"accessible_all",` + goodCommunity + `,"x":1}`, `authz: malformed invalidation message: unknown field "x"`},
	{"empty key", `{"":"accessible_all"}`, `authz: malformed invalidation message: unknown field ""`},
	{"spaces key", `{"  ":"accessible_all"}`, `authz: malformed invalidation message: unknown field "  "`},
	// Each key at most once (encoding/json lets the last one win).
	{"duplicate kind", `{"kind":"membership","kind":"accessible_all",` + goodCommunity + `}`, `authz: malformed invalidation message: duplicate field "kind"`},
	{"duplicate same value", `{"kind":"accessible_all",` + goodCommunity + `,` + goodCommunity + `}`, `authz: malformed invalidation message: duplicate field "community_id"`},
	{"duplicate escaped", `{"kind":"accessible_all",` + goodCommunity + `,"\u0063ommunity_id":"6b000000-0000-0000-0000-000000000002"}`, `authz: malformed invalidation message: duplicate field "community_id"`},
	// Not an object.
	{"empty", ``, `authz: malformed invalidation message: empty, not a JSON object`},
	{"only whitespace", " \n\t\r", `authz: malformed invalidation message: empty, not a JSON object`},
	{"null", `null`, `authz: malformed invalidation message: not a JSON object but null`},
	{"array", `[]`, `authz: malformed invalidation message: not a JSON object but an array`},
	{"string", `"kind"`, `authz: malformed invalidation message: not a JSON object but a string`},
	{"number", `1`, `authz: malformed invalidation message: not a JSON object but a number`},
	{"bool", `true`, `authz: malformed invalidation message: not a JSON object but a boolean`},
	{"garbage", `x`, `authz: malformed invalidation message: invalid character 'x' looking for beginning of value`},
	// Objects missing what the kind needs.
	{"empty object", `{}`, `authz: invalidation message without kind`},
	{"empty kind", `{"kind":"",` + goodCommunity + `}`, `authz: invalidation message without kind`},
	{"no kind", `{` + goodCommunity + `}`, `authz: invalidation message without kind`},
	{"unknown kind", `{"kind":"everything",` + goodCommunity + `}`, `authz: unknown invalidation kind "everything"`},
	{"kind in upper case", `{"kind":"MEMBERSHIP",` + goodCommunity + `}`, `authz: unknown invalidation kind "MEMBERSHIP"`},
	{"no community", `{"kind":"accessible_all"}`, `authz: accessible_all message without community_id`},
	{"zero community", `{"kind":"accessible_all","community_id":"00000000-0000-0000-0000-000000000000"}`, `authz: accessible_all message without community_id`},
	{"membership no ch", `{"kind":"membership",` + goodCommunity + `,"user_id":"75000000-0000-0000-0000-000000000002"}`, `authz: membership message needs user_id and channel_id (channel_id is missing)`},
	{"membership no user", `{"kind":"membership",` + goodCommunity + `,"channel_id":"63000000-0000-0000-0000-000000000003"}`, `authz: membership message needs user_id and channel_id (user_id is missing)`},
	{"membership neither", `{"kind":"membership",` + goodCommunity + `}`, `authz: membership message needs user_id and channel_id`},
	{"deleted no ch", `{"kind":"channel_deleted",` + goodCommunity + `}`, `authz: channel_deleted message needs channel_id`},
	{"visibility no ch", `{"kind":"visibility",` + goodCommunity + `}`, `authz: visibility message needs channel_id`},
	// Values are strings, and IDs are UUIDs.
	{"bad uuid", `{"kind":"accessible_all","community_id":"nope"}`, `authz: malformed invalidation message: community_id "nope" is not a UUID`},
	{"empty uuid", `{"kind":"accessible_all","community_id":""}`, `authz: malformed invalidation message: community_id "" is not a UUID`},
	{"uuid with braces", `{"kind":"accessible_all","community_id":"{6b000000-0000-0000-0000-000000000001}"}`, `authz: malformed invalidation message: community_id "{6b000000-0000-0000-0000-0000000"... (38 bytes) is not a UUID`},
	{"number kind", `{"kind":1,` + goodCommunity + `}`, `authz: malformed invalidation message: kind is a number, not a string`},
	{"huge number", `{"kind":"accessible_all","community_id":1e999}`, `authz: malformed invalidation message: community_id is a number, not a string`},
	{"null user", `{"kind":"accessible_all",` + goodCommunity + `,"user_id":null}`, `authz: malformed invalidation message: user_id is null, not a string`},
	{"bool channel", `{"kind":"accessible_all",` + goodCommunity + `,"channel_id":false}`, `authz: malformed invalidation message: channel_id is a boolean, not a string`},
	{"object kind", `{"kind":{"kind":"accessible_all"},` + goodCommunity + `}`, `authz: malformed invalidation message: kind is an object, not a string`},
	{"array community", `{"kind":"accessible_all","community_id":["6b000000-0000-0000-0000-000000000001"]}`, `authz: malformed invalidation message: community_id is an array, not a string`},
	// Syntax.
	{"not json", `{`, `authz: malformed invalidation message: unexpected end of input`},
	{"key only", `{"kind"`, `authz: malformed invalidation message: unexpected end of input`},
	{"no value", `{"kind":`, `authz: malformed invalidation message: unexpected end of input`},
	{"open string", `{"kind":"accessible_al`, `authz: malformed invalidation message: unexpected end of input`},
	{"no close", `{"kind":"accessible_all"`, `authz: malformed invalidation message: unexpected end of input`},
	{"trailing comma", `{"kind":"accessible_all",}`, `authz: malformed invalidation message: invalid character '}' looking for beginning of object key string`},
	{"missing comma", `{"kind":"accessible_all" ` + goodCommunity + `}`, `authz: malformed invalidation message: invalid character '"' after object key:value pair`},
	{"missing colon", `{"kind" "accessible_all"}`, `authz: malformed invalidation message: invalid character '"' after object key`},
	{"unquoted key", `{kind:"accessible_all"}`, `authz: malformed invalidation message: invalid character 'k'`},
	{"bad escape", `{"kind":"accessible_all\x"}`, `authz: malformed invalidation message: invalid character 'x' in string escape code`},
	{"control char", "{\"kind\":\"accessible\x01all\"}", `authz: malformed invalidation message: invalid character '\x01' in string literal`},
	{"bom", "\ufeff" + goodAll, `authz: malformed invalidation message: invalid character 'ï' looking for beginning of value`},
}

func TestMalformedMessagesAreErrors(t *testing.T) {
	for _, tc := range malformedMessages {
		m, err := DecodeMessage([]byte(tc.raw))
		if !assert.Error(t, err, tc.name) {
			continue
		}
		assert.Equal(t, Message{}, m, tc.name)
		assert.Equal(t, tc.want, err.Error(), tc.name)
		checkDecodeError(t, []byte(tc.raw), err)
	}
	_, err := Message{Kind: "x", CommunityID: NewID('k', 1)}.Encode()
	assert.Error(t, err)
}

// An empty or zero message names what is wrong; no error has an empty %s.
func TestValidateNamesTheProblem(t *testing.T) {
	for _, m := range []Message{{}, {CommunityID: NewID('k', 1)}} {
		assert.EqualError(t, m.Validate(), "authz: invalidation message without kind")
	}
	huge := Message{Kind: Kind(strings.Repeat("k", 1<<20)), CommunityID: NewID('k', 1)}
	err := huge.Validate()
	require.Error(t, err)
	assert.Less(t, len(err.Error()), maxErrorBytes, "the kind is quoted truncated")
	assert.Contains(t, err.Error(), "(1048576 bytes)")
}

// hugeField is a message whose community_id is n bytes long.
func hugeField(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"accessible_all","community_id":"`)
	b.Write(bytes.Repeat([]byte("a"), n))
	b.WriteString(`"}`)
	return b.Bytes()
}

// A message 256 times the limit (1 MiB) is rejected for its size, before any
// parsing. The error is the size limit's, although the input is also
// malformed JSON-wise, and it does not carry the input. The rejection
// allocates less than the limit; a decoder that read the input first would
// buffer all of it. The size is 1 MiB, not more: it only has to be far over
// the limit, and much larger inputs make the test slow under -race.
func TestHugeMessageIsRejectedBeforeParsing(t *testing.T) {
	const size = 1 << 20
	for _, raw := range [][]byte{
		hugeField(size),
		append(hugeField(size), '}'),    // would be trailing data
		bytes.Repeat([]byte("{"), size), // would be a syntax error
	} {
		_, err := DecodeMessage(raw)
		checkDecodeError(t, raw, err)
		assert.EqualError(t, err, "authz: malformed invalidation message: "+
			strconv.Itoa(len(raw))+" bytes, over the 4096-byte limit (MaxMessageBytes)")
		allocated := leastAllocatedBytes(10, func() { _, _ = DecodeMessage(raw) })
		assert.Less(t, allocated, uint64(MaxMessageBytes),
			"rejecting %d bytes allocated more than the limit: the input was read before its size was checked", len(raw))
	}
}

// leastAllocatedBytes is the fewest bytes the process allocated during one
// call of f, over runs calls. TotalAlloc counts every goroutine's
// allocations, and under -race goroutines left by the package's earlier tests
// can add a few KiB to one call. They may allocate during any one call but
// not during each of them, while f's own allocations are there every time.
func leastAllocatedBytes(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	least := uint64(math.MaxUint64)
	var before, after runtime.MemStats
	for range runs {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// The limit is exact, and applies to whitespace too.
func TestMaxMessageBytesBoundary(t *testing.T) {
	good, err := validMessages[0].Encode()
	require.NoError(t, err)
	padded := append(bytes.Repeat([]byte(" "), MaxMessageBytes-len(good)), good...)
	require.Len(t, padded, MaxMessageBytes)
	got, err := DecodeMessage(padded)
	require.NoError(t, err, "a message of exactly MaxMessageBytes is accepted")
	assert.Equal(t, validMessages[0], got)

	over := append([]byte(" "), padded...)
	_, err = DecodeMessage(over)
	assert.EqualError(t, err, "authz: malformed invalidation message: 4097 bytes, over the 4096-byte limit (MaxMessageBytes)")
}

// The largest valid message, with every string character written as a \u
// escape and whitespace around every token, fits the limit four times.
func TestMaxMessageBytesIsGenerous(t *testing.T) {
	m := Message{Kind: KindChannelDeleted, CommunityID: NewID('k', 1), UserID: NewID('u', 2), ChannelID: NewID('c', 3)}
	b, err := m.Encode()
	require.NoError(t, err)
	var esc bytes.Buffer
	inString := false
	for _, c := range b {
		switch {
		case c == '"':
			inString = !inString
			esc.WriteByte(c)
		case inString:
			esc.WriteString(`\u00`)
			esc.WriteString(strings.ToUpper(string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])))
		default:
			esc.WriteString(" \n")
			esc.WriteByte(c)
			esc.WriteString(" \n")
		}
	}
	assert.Less(t, esc.Len(), 1<<10, "escaped form: %s", esc.Bytes())
	assert.Less(t, 4*esc.Len(), MaxMessageBytes)
	got, err := DecodeMessage(esc.Bytes())
	require.NoError(t, err)
	assert.Equal(t, m, got)
}

// Bad values under the size limit are quoted by a short prefix only.
func TestErrorsQuoteAShortPrefix(t *testing.T) {
	long := strings.Repeat("\x01é", 400) // escapes widen when quoted
	for name, raw := range map[string]string{
		"long community_id": string(hugeField(4000)),
		"long kind":         `{"kind":"` + strings.Repeat("k", 4000) + `",` + goodCommunity + `}`,
		"long key":          `{"` + strings.Repeat("K", 4000) + `":"accessible_all"}`,
		"escaped key":       `{` + string(mustMarshal(long)) + `:"x"}`,
		"escaped kind":      `{"kind":` + string(mustMarshal(long)) + `}`,
		"long number":       `{"kind":` + strings.Repeat("9", 4000) + `}`,
	} {
		require.LessOrEqual(t, len(raw), MaxMessageBytes, name)
		_, err := DecodeMessage([]byte(raw))
		checkDecodeError(t, []byte(raw), err)
		t.Logf("%s: %v", name, err)
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkDecodeMessage(b *testing.B) {
	raw, err := validMessages[0].Encode()
	require.NoError(b, err)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMessage(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// The double-space check ignores the quoted input but not the error's text.
func TestUnquoted(t *testing.T) {
	assert.Contains(t, unquoted(`authz:  message without community_id`), "  ")
	assert.NotContains(t, unquoted(`authz: unknown field "  " or '\'' here`), "  ")
	assert.Equal(t, `a <q> b <q> c "open`, unquoted(`a "x \" y" b ' ' c "open`))
}

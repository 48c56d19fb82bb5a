package authz

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeMessage: DecodeMessage never panics; every error is short and
// well formed (checkDecodeError); every accepted message is valid, encodes,
// and decodes back to itself; and what the strict decoder accepts, the
// lenient encoding/json decoder older relays use reads the same way.
func FuzzDecodeMessage(f *testing.F) {
	for _, tc := range malformedMessages {
		f.Add([]byte(tc.raw))
	}
	for _, m := range validMessages {
		b, err := m.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(append(append([]byte(" \n"), b...), '\t'))
	}
	f.Add(hugeField(MaxMessageBytes))
	f.Add(bytes.Repeat([]byte(" "), MaxMessageBytes+1))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := DecodeMessage(raw)
		if err != nil {
			checkDecodeError(t, raw, err)
			if m != (Message{}) {
				t.Fatalf("an error (%v) came with a message %+v", err, m)
			}
			return
		}
		if len(raw) > MaxMessageBytes {
			t.Fatalf("accepted %d bytes, over MaxMessageBytes", len(raw))
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid message %+v: %v", m, err)
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("accepted %+v, which does not encode: %v", m, err)
		}
		back, err := DecodeMessage(enc)
		if err != nil || back != m {
			t.Fatalf("%+v encodes to %s, which decodes to %+v, %v", m, enc, back, err)
		}
		if !m.ChannelID.IsZero() && !bytes.Contains(enc, []byte(`"channel_id":"`+m.ChannelID.String()+`"`)) {
			t.Fatalf("%s lost channel_id (MS-9)", enc)
		}
		// The lenient decoder of older relays agrees on everything accepted.
		var old Message
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&old); err != nil || old != m {
			t.Fatalf("%q: strict %+v, lenient %+v, %v", raw, m, old, err)
		}
	})
}

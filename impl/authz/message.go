package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Kind is the kind of an invalidation message.
type Kind string

// The invalidation kinds relays exchange. Which cache entries each one drops
// is decided by each cache (see their Invalidate methods); in short:
//
//	membership       one user's membership in one channel changed
//	accessible_all   anything community-wide about accessible channels changed
//	visibility       a channel became open/private or listed/unlisted
//	channel_deleted  a channel was deleted
const (
	KindMembership     Kind = "membership"
	KindAccessibleAll  Kind = "accessible_all"
	KindVisibility     Kind = "visibility"
	KindChannelDeleted Kind = "channel_deleted"
)

// Message is one invalidation. Membership messages carry ChannelID although
// the membership cache now invalidates by user: older relays in a rolling
// deployment still read it (MS-9), so it must survive encoding.
type Message struct {
	Kind        Kind `json:"kind"`
	CommunityID ID   `json:"community_id"`
	UserID      ID   `json:"user_id,omitzero"`
	ChannelID   ID   `json:"channel_id,omitzero"`
}

// Validate reports what is missing for the message's kind. Its errors
// quote at most a short prefix of the kind.
func (m Message) Validate() error {
	switch m.Kind {
	case "":
		return errors.New("authz: invalidation message without kind")
	case KindMembership, KindAccessibleAll, KindVisibility, KindChannelDeleted:
	default:
		return fmt.Errorf("authz: unknown invalidation kind %s", quotePrefix(string(m.Kind)))
	}
	if m.CommunityID.IsZero() {
		return fmt.Errorf("authz: %s message without community_id", m.Kind)
	}
	switch m.Kind {
	case KindMembership:
		switch {
		case m.UserID.IsZero() && m.ChannelID.IsZero():
			return errors.New("authz: membership message needs user_id and channel_id")
		case m.UserID.IsZero():
			return errors.New("authz: membership message needs user_id and channel_id (user_id is missing)")
		case m.ChannelID.IsZero():
			return errors.New("authz: membership message needs user_id and channel_id (channel_id is missing)")
		}
	case KindVisibility, KindChannelDeleted:
		if m.ChannelID.IsZero() {
			return fmt.Errorf("authz: %s message needs channel_id", m.Kind)
		}
	}
	return nil
}

// Encode returns the wire form (JSON). It fails only for an invalid message.
// DecodeMessage accepts every wire form Encode returns and gives back the
// same message.
func (m Message) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// MaxMessageBytes is the largest wire form DecodeMessage accepts, checked
// before any parsing. The largest message Encode produces is 181 bytes (every
// field, the longest kind). Even with every character of every string written
// as a \u escape and whitespace around every token, it stays under 1 KiB. So
// 4 KiB leaves room to spare.
const MaxMessageBytes = 4 << 10

// maxQuoted bounds how many bytes of a bad key or value an error quotes,
// so that an error stays short whatever the input (the caller logs it).
const maxQuoted = 32

// wireFields are the keys of the wire form, each allowed at most once.
var wireFields = [...]string{"kind", "community_id", "user_id", "channel_id"}

// DecodeMessage parses the wire form, strictly. It accepts exactly one JSON
// object of at most MaxMessageBytes, surrounded by nothing but JSON
// whitespace. Its keys must be exactly "kind", "community_id", "user_id" and
// "channel_id", each at most once, with string values only. Keys compare byte
// for byte after JSON unescaping, with no case folding. Then Validate's rules
// apply. Anything else is an error: a malformed message must change nothing,
// so the caller drops it and logs the error. Errors are short (they quote at
// most a 32-byte prefix of a bad key or value) and start with "authz: ".
func DecodeMessage(b []byte) (Message, error) {
	if len(b) > MaxMessageBytes {
		return Message{}, malformed(fmt.Sprintf("%d bytes, over the %d-byte limit (MaxMessageBytes)", len(b), MaxMessageBytes))
	}
	m, err := decodeObject(b)
	if err != nil {
		return Message{}, err
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	return m, nil
}

// decodeObject walks the tokens of one JSON object and fills a Message
// from its fields; Validate is the caller's.
func decodeObject(b []byte) (Message, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	// Numbers stay literals: decoding one into float64 could fail with an
	// error quoting the whole literal.
	dec.UseNumber()
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return Message{}, malformed("empty, not a JSON object")
	case err != nil:
		return Message{}, syntaxError(err)
	case tok != json.Delim('{'):
		return Message{}, malformed("not a JSON object but " + tokenKind(tok))
	}
	var m Message
	var seen [len(wireFields)]bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Message{}, syntaxError(err)
		}
		key, ok := tok.(string)
		if !ok { // json.Decoder returns only strings in key position
			return Message{}, malformed("object key is " + tokenKind(tok) + ", not a string")
		}
		field := -1
		for i, name := range wireFields {
			if key == name {
				field = i
				break
			}
		}
		if field < 0 {
			return Message{}, malformed("unknown field " + quotePrefix(key))
		}
		if seen[field] {
			return Message{}, malformed(fmt.Sprintf("duplicate field %q", key))
		}
		seen[field] = true
		tok, err = dec.Token()
		if err != nil {
			return Message{}, syntaxError(err)
		}
		v, ok := tok.(string)
		if !ok {
			return Message{}, malformed(key + " is " + tokenKind(tok) + ", not a string")
		}
		if key == "kind" {
			m.Kind = Kind(v)
			continue
		}
		id, err := ParseID(v)
		if err != nil { // not ParseID's error: it quotes the whole value
			return Message{}, malformed(key + " " + quotePrefix(v) + " is not a UUID")
		}
		switch key {
		case "community_id":
			m.CommunityID = id
		case "user_id":
			m.UserID = id
		case "channel_id":
			m.ChannelID = id
		}
	}
	if tok, err := dec.Token(); err != nil {
		return Message{}, syntaxError(err)
	} else if tok != json.Delim('}') { // More is false only before '}' or on an error
		return Message{}, malformed("object ends with " + tokenKind(tok))
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(b[end:], " \t\r\n"); len(rest) > 0 {
		return Message{}, malformed(fmt.Sprintf("trailing data after the object at byte %d", len(b)-len(rest)))
	}
	return m, nil
}

func malformed(what string) error {
	return errors.New("authz: malformed invalidation message: " + what)
}

// syntaxError reports an error of json.Decoder.Token. Its errors are short
// (a syntax error quotes one character; its Offset is not reported, as
// Token's offsets are not consistently 0- or 1-based); an end of input in
// the middle of the object is io.EOF or io.ErrUnexpectedEOF.
func syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return malformed("unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("authz: malformed invalidation message: %w", se)
	}
	return malformed("invalid JSON")
}

// tokenKind names the JSON type of a json.Decoder token.
func tokenKind(tok json.Token) string {
	switch tok := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		switch tok {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", rune(tok))
	}
	return fmt.Sprintf("a %T", tok)
}

// quotePrefix quotes s, or its first maxQuoted bytes (cut at a rune
// boundary) and its length if it is longer.
func quotePrefix(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:n], len(s))
}

// Invalidator is a cache that applies invalidation messages locally.
type Invalidator interface {
	Invalidate(m Message)
}

// Publisher sends an invalidation to the other relays. Delivery is best
// effort (Redis pub/sub): a published message may be lost, delayed,
// duplicated or reordered, which is why both caches bound their staleness.
type Publisher interface {
	Publish(ctx context.Context, m Message) error
}

package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Validate reports what is missing for the message's kind.
func (m Message) Validate() error {
	if m.CommunityID.IsZero() {
		return fmt.Errorf("authz: %s message without community_id", m.Kind)
	}
	switch m.Kind {
	case KindMembership:
		if m.UserID.IsZero() || m.ChannelID.IsZero() {
			return errors.New("authz: membership message needs user_id and channel_id")
		}
	case KindVisibility, KindChannelDeleted:
		if m.ChannelID.IsZero() {
			return fmt.Errorf("authz: %s message needs channel_id", m.Kind)
		}
	case KindAccessibleAll:
	default:
		return fmt.Errorf("authz: unknown invalidation kind %q", m.Kind)
	}
	return nil
}

// Encode returns the wire form (JSON). It fails only for an invalid message.
func (m Message) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// DecodeMessage parses the wire form. Unknown fields are an error, as are
// missing fields for the kind: a malformed message must change nothing, so
// the caller drops it and logs the error.
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Message{}, fmt.Errorf("authz: malformed invalidation message: %w", err)
	}
	if dec.More() {
		return Message{}, errors.New("authz: malformed invalidation message: trailing data")
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	return m, nil
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

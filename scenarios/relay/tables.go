package relay

import (
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// Channel is one row of the channels table.
type Channel struct {
	ID, Community         authz.ID
	Open, Listed, Deleted bool
}

// Tables is the relay database's state. Channels are kept in insertion
// order so that every scan is deterministic; the index maps an ID to its
// position.
type Tables struct {
	channels []Channel
	index    map[authz.ID]int
	members  map[memberRow]bool // active memberships; removed ones are false
	byUser   map[authz.ID][]int // channel positions the user ever had a membership in, in grant order
}

type memberRow struct{ user, channel authz.ID }

// NewTables returns empty tables.
func NewTables() Tables {
	return Tables{index: map[authz.ID]int{}, members: map[memberRow]bool{}, byUser: map[authz.ID][]int{}}
}

// AddChannel inserts a channel row.
func (t *Tables) AddChannel(c Channel) error {
	if _, ok := t.index[c.ID]; ok {
		return fmt.Errorf("relay: channel %v exists", c.ID)
	}
	t.index[c.ID] = len(t.channels)
	t.channels = append(t.channels, c)
	return nil
}

// Channel returns a copy of a channel row.
func (t *Tables) Channel(id authz.ID) (Channel, bool) {
	i, ok := t.index[id]
	if !ok {
		return Channel{}, false
	}
	return t.channels[i], true
}

// UpdateChannel changes an existing row.
func (t *Tables) UpdateChannel(id authz.ID, f func(*Channel)) error {
	i, ok := t.index[id]
	if !ok {
		return fmt.Errorf("relay: no channel %v", id)
	}
	f(&t.channels[i])
	return nil
}

// SetMember makes user's membership in channel active or removed.
func (t *Tables) SetMember(user, channel authz.ID, active bool) error {
	i, ok := t.index[channel]
	if !ok {
		return fmt.Errorf("relay: no channel %v", channel)
	}
	k := memberRow{user, channel}
	if _, seen := t.members[k]; !seen {
		t.byUser[user] = append(t.byUser[user], i)
	}
	t.members[k] = active
	return nil
}

// The seeds' query rules, evaluated on the state (a snapshot when called by
// a statement).

// memberChannels: channels of community where user's membership is active
// and the channel is not deleted; at most limit (limit < 0: no limit).
func (t *Tables) memberChannels(community, user authz.ID, limit int) []authz.ID {
	var out []authz.ID
	for _, i := range t.byUser[user] {
		if limit >= 0 && len(out) >= limit {
			break
		}
		c := t.channels[i]
		if c.Community == community && !c.Deleted && t.members[memberRow{user, c.ID}] {
			out = append(out, c.ID)
		}
	}
	return out
}

// listedOpenChannels: channels of community that are open, listed, not deleted.
func (t *Tables) listedOpenChannels(community authz.ID) []authz.ID {
	var out []authz.ID
	for _, c := range t.channels {
		if c.Community == community && c.Open && c.Listed && !c.Deleted {
			out = append(out, c.ID)
		}
	}
	return out
}

// IsActiveMember is the point-check rule.
func (t *Tables) IsActiveMember(community, user, channel authz.ID) bool {
	i, ok := t.index[channel]
	if !ok {
		return false
	}
	c := t.channels[i]
	return c.Community == community && !c.Deleted && t.members[memberRow{user, channel}]
}

// Accessible is the truth of OC: reader may access channel of community when
// it is a member of it, or when it is open and listed, and never when the
// channel is deleted or belongs to another community.
func (t *Tables) Accessible(community, reader, channel authz.ID) bool {
	i, ok := t.index[channel]
	if !ok {
		return false
	}
	c := t.channels[i]
	if c.Community != community || c.Deleted {
		return false
	}
	return t.members[memberRow{reader, channel}] || (c.Open && c.Listed)
}

// ChannelIDs returns every channel ID in insertion order.
func (t *Tables) ChannelIDs() []authz.ID {
	out := make([]authz.ID, len(t.channels))
	for i, c := range t.channels {
		out[i] = c.ID
	}
	return out
}

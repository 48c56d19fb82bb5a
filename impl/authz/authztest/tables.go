package authztest

import (
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// Channel is one row of the channels table.
type Channel struct {
	ID, Community         authz.ID
	Open, Listed, Deleted bool
}

// Tables is the relay database's state, the source texts' two tables
// (channels and memberships), and the source texts' query rules evaluated
// on it. It is the one in-memory implementation of the schema: DB serves it
// to the caches' unit tests, the simulated deployment (scenarios/world)
// stores it in its simulated PostgreSQL, and the checkers' truth is
// evaluated on it.
//
// Channels are kept in insertion order so that every scan is deterministic;
// the index maps an ID to its position. A Tables value must be created with
// NewTables. Copying a Tables shares its maps: use Clone for a snapshot.
type Tables struct {
	channels []Channel
	index    map[authz.ID]int
	byUser   map[authz.ID]*userRows // every user's membership rows
}

// userRows are one user's membership rows: the channel positions the user
// ever had a membership in, in grant order, whether each is active, and where
// each position is in that list. Rows are kept per user, not in one map keyed
// by (user, channel). The scans of a user's memberships (every snapshot load)
// then walk two slices instead of probing a map of every membership of the
// deployment, which dominated MS-8's check.
type userRows struct {
	pos    []int
	active []bool
	// at is, by channel position, 1 + the row's index in pos and active
	// (0: no row), as long as the highest position the user has a row
	// for. A slice, not a map: MS-8's tables are 280 users of 16,384
	// memberships each, and building them into maps (4.6 million inserts,
	// each map growing) was a tenth of the MS family's time.
	at []int32
}

func (u *userRows) clone() *userRows {
	return &userRows{pos: append([]int(nil), u.pos...), active: append([]bool(nil), u.active...), at: append([]int32(nil), u.at...)}
}

// row is the index in pos and active of the row for channel position i.
func (u *userRows) row(i int) (int, bool) {
	if i < len(u.at) && u.at[i] > 0 {
		return int(u.at[i]) - 1, true
	}
	return 0, false
}

// member reports whether user's membership in the channel at position i
// is active.
func (t *Tables) member(user authz.ID, i int) bool {
	u := t.byUser[user]
	if u == nil {
		return false
	}
	j, ok := u.row(i)
	return ok && u.active[j]
}

// NewTables returns empty tables.
func NewTables() Tables {
	return Tables{index: map[authz.ID]int{}, byUser: map[authz.ID]*userRows{}}
}

// Clone returns a deep copy.
func (t *Tables) Clone() Tables {
	c := Tables{channels: append([]Channel(nil), t.channels...), index: make(map[authz.ID]int, len(t.index)),
		byUser: make(map[authz.ID]*userRows, len(t.byUser))}
	for k, v := range t.index { //windtunnel:unordered copying a map
		c.index[k] = v
	}
	for k, v := range t.byUser { //windtunnel:unordered copying a map
		c.byUser[k] = v.clone()
	}
	return c
}

// AddChannel inserts a channel row. Adding an existing ID is an error.
func (t *Tables) AddChannel(c Channel) error {
	if _, ok := t.index[c.ID]; ok {
		return fmt.Errorf("authztest: channel %v exists", c.ID)
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

// UpdateChannel applies f to an existing channel row.
func (t *Tables) UpdateChannel(id authz.ID, f func(*Channel)) error {
	i, ok := t.index[id]
	if !ok {
		return fmt.Errorf("authztest: no channel %v", id)
	}
	f(&t.channels[i])
	t.channels[i].ID = id // the key is not f's to change
	return nil
}

// SetMember makes user's membership in channel active or removed.
func (t *Tables) SetMember(user, channel authz.ID, active bool) error {
	i, ok := t.index[channel]
	if !ok {
		return fmt.Errorf("authztest: no channel %v", channel)
	}
	u := t.byUser[user]
	if u == nil {
		u = &userRows{}
		t.byUser[user] = u
	}
	j, seen := u.row(i)
	if !seen {
		j = len(u.pos)
		if i >= len(u.at) {
			u.at = append(u.at, make([]int32, i+1-len(u.at))...)
		}
		u.at[i] = int32(j + 1)
		u.pos, u.active = append(u.pos, i), append(u.active, false)
	}
	u.active[j] = active
	return nil
}

// The source texts' query rules (authz's package comment), evaluated on the
// state: a statement calls them on its snapshot.

// MemberChannels returns the channels of community where user's membership
// is active and the channel is not deleted, in grant order; at most limit
// (limit < 0: no limit).
func (t *Tables) MemberChannels(community, user authz.ID, limit int) []authz.ID {
	u := t.byUser[user]
	if u == nil {
		return nil
	}
	n := len(u.pos) // at most every row (MS-4's users hold up to 16,400)
	if limit >= 0 && limit < n {
		n = limit
	}
	out := make([]authz.ID, 0, n)
	for j, i := range u.pos {
		if limit >= 0 && len(out) >= limit {
			break
		}
		c := t.channels[i]
		if c.Community == community && !c.Deleted && u.active[j] {
			out = append(out, c.ID)
		}
	}
	if len(out) == 0 {
		return nil // as before it was sized: no channel is no slice
	}
	return out
}

// ListedOpenChannels returns the channels of community that are open,
// listed and not deleted, in insertion order.
func (t *Tables) ListedOpenChannels(community authz.ID) []authz.ID {
	var out []authz.ID
	for _, c := range t.channels {
		if c.Community == community && c.Open && c.Listed && !c.Deleted {
			out = append(out, c.ID)
		}
	}
	return out
}

// IsActiveMember is the point-check rule: channel is in
// MemberChannels(community, user).
func (t *Tables) IsActiveMember(community, user, channel authz.ID) bool {
	i, ok := t.index[channel]
	if !ok {
		return false
	}
	c := t.channels[i]
	return c.Community == community && !c.Deleted && t.member(user, i)
}

// Accessible is the truth of the accessible-channel lookup: reader may
// access channel of community when it is a member of it, or when it is
// open and listed, and never when the channel is deleted or belongs to
// another community.
func (t *Tables) Accessible(community, reader, channel authz.ID) bool {
	i, ok := t.index[channel]
	if !ok {
		return false
	}
	c := t.channels[i]
	if c.Community != community || c.Deleted {
		return false
	}
	return t.member(reader, i) || (c.Open && c.Listed)
}

// ChannelIDs returns every channel ID in insertion order.
func (t *Tables) ChannelIDs() []authz.ID {
	out := make([]authz.ID, len(t.channels))
	for i, c := range t.channels {
		out[i] = c.ID
	}
	return out
}

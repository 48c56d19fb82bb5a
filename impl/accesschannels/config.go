package accesschannels

import (
	"fmt"
	"time"
)

// Defaults, from the seed unless noted.
const (
	// DefaultMaxAgeOpen is OPEN_CHANNELS_MAX_AGE: how long after its database
	// read BEGAN a cached open set may be served (OC-2).
	DefaultMaxAgeOpen = 1 * time.Second

	// DefaultTTL is the time-to-live of every cache entry, counted from its
	// insertion as Moka's time_to_live counts it. It is the member half's
	// pre-existing 10 s window (OC-7).
	DefaultTTL = 10 * time.Second

	// DefaultMemberCapacity is how many (community, reader) member halves a
	// cache keeps before evicting the least recently used. Not in the seed:
	// chosen so that the seed's cold burst (48k WebSocket clients plus 4.8k
	// HTTP agents on one relay) fits without eviction.
	DefaultMemberCapacity = 100_000

	// DefaultCommunityCapacity is how many communities' open halves a cache
	// keeps. Not in the seed: one entry per active community is small, and a
	// relay serving more communities than this pays one extra open-set read
	// per evicted community.
	DefaultCommunityCapacity = 1_024
)

// Config tunes a Cache. The zero value means every default.
type Config struct {
	// MaxAgeOpen bounds how long an open set is served, counted from the
	// instant its read began (OC-2, OC-4). 0 means DefaultMaxAgeOpen. It must
	// not exceed TTL, which would make the bound meaningless.
	MaxAgeOpen time.Duration

	// TTL is the lifetime of every entry, counted from its insertion. 0 means
	// DefaultTTL.
	TTL time.Duration

	// MemberCapacity is the number of member halves kept (LRU beyond it).
	// 0 means DefaultMemberCapacity.
	MemberCapacity int

	// CommunityCapacity is the number of open halves kept (LRU beyond it).
	// 0 means DefaultCommunityCapacity.
	CommunityCapacity int
}

// withDefaults rejects nonsense values and fills zero fields. Negative
// values are refused before the defaults replace the zeros, so that the
// test sees every value a caller can pass.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.MaxAgeOpen < 0:
		return c, fmt.Errorf("accesschannels: MaxAgeOpen must be positive, got %v", c.MaxAgeOpen)
	case c.TTL < 0:
		return c, fmt.Errorf("accesschannels: TTL must be positive, got %v", c.TTL)
	case c.MemberCapacity < 0:
		return c, fmt.Errorf("accesschannels: MemberCapacity must be positive, got %d", c.MemberCapacity)
	case c.CommunityCapacity < 0:
		return c, fmt.Errorf("accesschannels: CommunityCapacity must be positive, got %d", c.CommunityCapacity)
	}
	if c.MaxAgeOpen == 0 {
		c.MaxAgeOpen = DefaultMaxAgeOpen
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.MemberCapacity == 0 {
		c.MemberCapacity = DefaultMemberCapacity
	}
	if c.CommunityCapacity == 0 {
		c.CommunityCapacity = DefaultCommunityCapacity
	}
	if c.MaxAgeOpen > c.TTL {
		return c, fmt.Errorf("accesschannels: MaxAgeOpen (%v) must not exceed TTL (%v)", c.MaxAgeOpen, c.TTL)
	}
	return c, nil
}

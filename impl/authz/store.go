package authz

import (
	"context"
	"time"
)

// Pool hands out database connections. Acquire waits while every connection
// is checked out, and gives up when ctx ends.
type Pool interface {
	Acquire(ctx context.Context) (Conn, error)
}

// Conn is one checked-out connection. It is used by one task at a time and
// must be released exactly once, also after an error.
type Conn interface {
	// CheckedOutAt is the instant the pool handed this connection over. Every
	// row a statement on it returns was committed no later than the moment
	// the statement started, which is after this instant.
	CheckedOutAt() time.Time

	// MemberChannels returns the channels of community where user's
	// membership is not removed and the channel is not deleted.
	MemberChannels(ctx context.Context, community, user ID) ([]ID, error)

	// ListedOpenChannels returns the channels of community that are open,
	// listed and not deleted.
	ListedOpenChannels(ctx context.Context, community ID) ([]ID, error)

	// ActiveMemberships returns at most limit of MemberChannels(community,
	// user), in no particular order. A caller that receives limit IDs cannot
	// tell whether more exist.
	ActiveMemberships(ctx context.Context, community, user ID, limit int) ([]ID, error)

	// IsActiveMember reports whether channel is in MemberChannels(community,
	// user): the authoritative point check.
	IsActiveMember(ctx context.Context, community, user, channel ID) (bool, error)

	// Release returns the connection to its pool.
	Release()
}

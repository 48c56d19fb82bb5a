// Package authz holds what the two authorization caches share: channel,
// user and community IDs, the database interface they read through, and the
// invalidation messages relays exchange.
//
// The database interface mirrors how the seeds' relay reaches PostgreSQL. A
// pool hands out connections; Acquire may wait when every connection is busy.
// Each connection runs one statement at a time. The instant the pool handed
// the connection over is visible to the caller through Conn.CheckedOutAt. The
// membership cache counts its 10 s freshness bound from that instant, not
// from when the load finished, because the rows the statement returns can be
// no older than the checkout.
//
// Queries (the same rules as the seeds' SQL):
//
//   - MemberChannels: channels of the community where the user's membership
//     is not removed and the channel is not deleted.
//   - ListedOpenChannels: channels of the community whose visibility is open,
//     that are listed, and not deleted.
//   - ActiveMemberships: like MemberChannels, at most limit IDs, in no
//     particular order (the caller sorts).
//   - IsActiveMember: whether one channel is among MemberChannels.
package authz

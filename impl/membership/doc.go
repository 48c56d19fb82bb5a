// Package membership is the membership snapshot cache. It answers "is this
// user an active member of this channel?" for a relay's channel checks. A
// cold client in 280 channels then costs one membership read instead of 280
// point checks, each on its own connection (MS-1).
//
// # Model
//
// The cache keeps one entry per (community, user), in a weighted LRU
// (impl/wcache) under a budget of estimated bytes (default 64 MiB, MS-8):
//
//   - Snapshot: the user's complete active-membership list in the
//     community, sorted and immutable, answering checks by binary search.
//     A hit takes one short lock and allocates nothing.
//   - PointChecks: the user has more than MaxSnapshotIDs (16,384)
//     memberships. The marker stores no decision; each check asks the
//     database (IsActiveMember) and counts fallbacks{reason="oversize"}
//     (MS-4).
//   - Loading: a load is in flight. It holds the user's lock, which every
//     request for that user shares (MS-5).
//
// Every entry is fresh until the instant its connection was checked out plus
// Freshness (default 10 s), not until 10 s after the load finished. Rows a
// statement returns are no older than the checkout. So the bound holds even
// when the pool made the loader wait or the query was slow (MS-2). Within
// that window a lost invalidation can leave a revoked membership granted, or
// a new one denied (MS-10).
//
// # Request flow
//
//  1. Look up the entry. A fresh snapshot answers; a fresh marker sends the
//     check to the database.
//  2. On a miss, install a Loading entry and become its loader. Otherwise
//     wait, at most LockWait in all, for the Loading entry's lock; if the
//     wait times out, ask the database directly and count
//     fallbacks{reason="wait_timeout"} (MS-6).
//  3. After acquiring the lock, recheck: usually the loader has published
//     and the check is a hit, so K concurrent cold checks cost one read
//     (MS-5). If the Loading entry is still current, its loader failed;
//     this request loads instead.
//  4. The loader checks out a connection and reads at most MaxSnapshotIDs+1
//     IDs. More than MaxSnapshotIDs means the list may be truncated: keep a
//     marker. Otherwise sort it into a snapshot.
//  5. Publish under the cache's short lock only if the loader's Loading
//     entry is still the current entry. Invalidation takes the same lock and
//     removes entries, Loading ones included, so a load that raced a change
//     can answer its own request but never repopulate the cache (MS-3).
//
// Database errors are returned and never cached. A failed or cancelled load
// releases the user's lock and leaves the Loading entry without a decision,
// so the next waiter or request loads again (MS-7).
//
// Invalidation (Invalidate, an authz.Invalidator) removes the user's entry
// for a membership message. It goes by user: the channel_id the message
// carries is for older relays (MS-9). It removes the community's entries for
// accessible_all and channel_deleted messages; see Invalidate.
//
// # Metrics
//
// Metrics returns a stats.Registry with membership_cache_hits_total (checks
// served from a fresh snapshot), membership_cache_misses_total (load
// attempts) and membership_cache_fallbacks_total{reason="oversize"|
// "wait_timeout"} (checks answered by a point check).
//
// # Budget
//
// EntryWeight is the weigher: EntryOverheadBytes of estimated bookkeeping
// plus 16 bytes per ID, plus LoadingLockBytes for a Loading entry. Empty
// snapshots and markers weigh EntryOverheadBytes, never zero. The budget is
// best effort, like the seed's. It bounds the estimated weight of retained
// entries, not the process's memory: a load's buffers and snapshots held by
// in-flight requests are outside it.
//
// # Runtime
//
// All time and locking goes through an rt.Runtime: rt.Real() in a service,
// the deterministic simulator (package sim) in tests, where the same code
// runs under a seeded scheduler and virtual time.
package membership

// Package accesschannels is a relay's accessible-channels cache: which
// channels of a community a reader may read, split into two cached halves.
//
//	accessible(reader) = member channels of the reader   (per reader)
//	                   ∪ listed open channels of the community  (shared)
//
// The open half is the same for every reader, so it is read once per
// community and shared (OC-8). A per-reader cache of the whole union would
// re-read every open channel of the community on every miss. The per-reader
// baseline lives in model.UnionCache.
//
// # The two halves
//
// Member half: one entry per (community, reader), read with
// authz.Conn.MemberChannels and kept for Config.TTL (10 s) after insertion,
// as before the split (OC-7). Known debt, documented and kept (OC-6): its
// fill is an unfenced read-then-insert. A fill that raced an invalidation of
// that reader inserts the member set it read before the change, and that
// stale set is served to that one reader until TTL after the insertion. So
// member answers are bounded by TTL plus the duration of the read, not by
// TTL alone.
//
// Open half: one entry per community, read with
// authz.Conn.ListedOpenChannels. The entry records the instant its read BEGAN
// (before the connection is acquired). It is served only while now <
// readStart + Config.MaxAgeOpen (1 s, OPEN_CHANNELS_MAX_AGE). After that the
// next lookup re-reads it. The age counts from the start of the read, so an
// open set is never served more than MaxAgeOpen after the database state it
// shows, whatever happened while the read was in flight. So open-set fills
// need no fence (OC-2, OC-4). A read slower than MaxAgeOpen yields an entry
// that is already too old on arrival: it answers the lookups that waited for
// it and no other.
//
// Concurrent lookups that miss the same community's open set share one read
// in flight (as Moka's get_with did), so a cold burst reads it once. A lookup
// joins a read only while that read is younger than MaxAgeOpen, so waiters'
// answers obey the same bound. A failed read is not cached; its waiters get
// its error. The exception is a read abandoned because its leader's context
// ended: the waiters retry it (at most 3 attempts per lookup).
//
// The accepted trade-off (seed, OC-2 and OC-3): if an invalidation is lost,
// any reader on that relay, including one with no cache entry, can be
// granted a just-revoked open channel (made private, unlisted or deleted) for
// at most MaxAgeOpen.
//
// # Invalidation
//
// Invalidate implements authz.Invalidator (OC-5). A membership message drops
// only that reader's member half. A community-wide message (accessible_all,
// visibility, channel_deleted) drops the community's open half and every
// member half of that community. Every key includes the community, so no
// reader is ever granted a channel of another community (OC-10).
//
// # Metrics
//
// Metrics returns a stats.Registry with the seed's names (OC-9):
// open_channels_cache_hits_total,
// open_channels_cache_misses_total{reason="absent"|"expired"}, and
// accessible_channels_cache_hits_total / _misses_total, which now count the
// member half only (a meaning change for dashboards that read them as
// whole-lookup hit rates). Each lookup counts exactly one member-half event
// and one open-half event; Stats returns the same numbers as a struct.
//
// # Concurrency and determinism
//
// All state sits behind one rt.Mutex held only for map and list operations;
// no database call is ever made while it is held. Time, locks and waits go
// through rt.Runtime, so the same code runs in a service with rt.Real() and
// under the deterministic simulator (package sim) with virtual time.
package accesschannels

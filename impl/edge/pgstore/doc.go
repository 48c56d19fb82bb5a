// Package pgstore is the authorization database on PostgreSQL: an
// authz.Pool, built on github.com/jackc/pgx/v5, whose connections run the
// seeds' four queries. The caches of impl/accesschannels (OC) and
// impl/membership (MS) read through it in a real deployment:
//
//	store, err := pgstore.Open(ctx, "postgres://relay@db:5432/buzz?sslmode=disable", pgstore.Config{})
//	if err != nil { ... }
//	defer store.Close()
//	oc, _ := accesschannels.New(rt.Real(), store, accesschannels.Config{})
//	ms, _ := membership.New(rt.Real(), store, membership.Config{})
//
// # Schema and queries
//
// Schema holds the tables as the seeds describe them:
// channels(id uuid, community_id uuid, visibility 'open'|'private', listed
// bool, deleted_at timestamptz) and channel_members(channel_id, user_id,
// removed_at timestamptz), with indexes that keep each query an index
// lookup. CreateSchema creates them; an existing deployment brings its own.
//
//	member_channels       memberships not removed, channel not deleted,
//	                      channel in the community (OC member half)
//	listed_open_channels  open, listed, not deleted (OC open half)
//	active_memberships    member_channels with LIMIT $3; the membership
//	                      cache asks for 16,385 (MS-4)
//	is_active_member      the authoritative point check (EXISTS)
//
// The rules are those of impl/authz/authztest, the in-memory database the
// simulations use; pgstore's tests check that the two answer the same for
// random data (a differential test).
//
// After bulk loading, run Analyze: without planner statistics PostgreSQL
// can join 16,384 memberships quadratically, which is how the membership
// seed's boundary test failed in CI until its fixture ran ANALYZE.
//
// # Checkout instant
//
// Acquire waits while every connection is checked out (Config.MaxConns),
// gives up when its context ends, and stamps the connection with
// time.Now() after it is ready and before any statement runs:
// CheckedOutAt. Every statement on the connection reads a snapshot taken
// later, so a cache that counts freshness from CheckedOutAt (the membership
// cache's 10 s, MS-2) never serves data older than it believes.
//
// # Pool
//
// The pool is pgstore's own (pool.go), not pgxpool: pgxpool needs the
// github.com/jackc/puddle/v2 module, which this repository's go.sum does not
// list. It keeps what the caches rely on: a bound on connections, a
// cancellable wait, reuse of warm connections (prepared statements are
// cached per connection), a ping before reusing a connection idle for more
// than a second, and no reuse of a connection left busy or broken (for
// example by a cancelled statement). Metrics (pgstore_*) count checkouts,
// the wait for them, statements and rows per statement: the quantities the
// seeds' A/B reports compare (MS-11, OC-8).
//
// This package is at the edge of the runtime seam, like impl/rt: it runs
// real goroutines and talks to the network, is never run by the simulator,
// and is exempt from the determinism contract.
package pgstore

// Package pgstore is the authorization database on PostgreSQL: an
// authz.Pool on github.com/jackc/pgx/v5/pgxpool, whose connections run the
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
// Schema holds the tables as the seeds describe them: channels(id uuid,
// community_id uuid, visibility 'open'|'private', listed bool, deleted_at
// timestamptz) and channel_members(channel_id, user_id, removed_at
// timestamptz). Its indexes keep each query an index lookup. CreateSchema
// creates them; an existing deployment brings its own.
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
// After bulk loading, run Analyze. Without planner statistics PostgreSQL can
// join 16,384 memberships quadratically (MS-4's boundary test).
//
// # Checkout instant
//
// Acquire waits while every connection is checked out (Config.MaxConns) and
// gives up when its context ends. It stamps the connection with time.Now()
// after pgxpool hands it over (after any dial or health ping) and before any
// statement runs: CheckedOutAt. Every statement on the connection reads a
// snapshot taken later. So a cache that counts freshness from CheckedOutAt
// (the membership cache's 10 s, MS-2) never serves data older than it
// believes.
//
// # Pool
//
// The pool is a pgxpool.Pool. Config sets its size (MaxConns) and the ping
// before reusing a connection idle for more than a second (IdlePing, as
// pgxpool's ShouldPing). It also sets the idle time after which its health
// check closes a connection (MaxIdle), the dial bound (ConnectTimeout) and
// the search_path (Schema, sent in each connection's startup message).
// pgxpool reuses warm connections, since prepared statements are cached per
// connection. It never reuses one left closed, busy or inside a transaction,
// for example by a cancelled statement (MS-7). Close wakes waiting Acquires
// with ErrClosed and does not wait for checked-out connections. Metrics
// (pgstore_*) count checkouts, the time spent getting them, connections
// opened and closed, statements and rows per statement. Those are the
// quantities the seeds' A/B reports compare (MS-11, OC-8).
//
// This package is at the edge of the runtime seam, like impl/rt: it runs
// real goroutines and talks to the network, is never run by the simulator,
// and is exempt from the determinism contract.
package pgstore

// Package integration runs the production authorization caches, the
// open-channels cache (impl/accesschannels, OC) and the membership
// snapshot cache (impl/membership, MS), on real PostgreSQL
// (impl/edge/pgstore) and real Redis pub/sub (impl/edge/redisbus), with
// rt.Real() and the wall clock. It holds tests only.
//
// The tests reproduce the seeds' own integration tests:
//
//   - a_lost_open_set_invalidation_grants_a_revoked_channel_only_until_max_age:
//     two relays on one database with no pub/sub between them. For each
//     revocation (private, deleted, unlisted) a new reader is still granted
//     inside OPEN_CHANNELS_MAX_AGE and every reader is denied after it (OC-2,
//     OC-3). It runs with the window shortened to 300 ms and at the real 1 s.
//   - Grant, remove and re-add across two relays connected by Redis (MS-9,
//     OC-5). The same runs with the Redis subscription cut, where the stale
//     answers stop at the freshness window (MS-2, MS-10, OC-7).
//   - Membership boundary probes at 4,097, 16,384 and 16,385 memberships
//     after bulk seeding and ANALYZE (MS-4).
//
// Run them with `make integration`, which starts private servers
// (impl/edge/testenv/run.sh), or against your own by setting
// WINDTUNNEL_PG_URL and WINDTUNNEL_REDIS_ADDR (see impl/edge/testenv).
// Without those variables they are skipped; under the harness
// (WINDTUNNEL_INTEGRATION=1) a missing or unreachable server fails them.
package integration

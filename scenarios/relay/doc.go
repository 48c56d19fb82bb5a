// Package relay wires the simulated deployment the authorization claims are
// flown in: the relay database (the seeds' channels and memberships tables)
// on a simulated PostgreSQL pool, pods that each run the production caches
// (impl/accesschannels and impl/membership) behind the invalidation bus,
// admins that change the tables and invalidate, readers whose every answer
// is recorded, and the truth of every tracked (reader, channel) key at every
// commit instant, for the checkers.
//
// Everything here runs inside simulated tasks and follows the determinism
// contract; the world is built from a *sim.Sim and its PRNG only.
package relay

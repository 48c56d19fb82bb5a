// Package pods is the simulated deployment the authorization claims (OC,
// MS) are flown in: the relay database (the source texts' channels and
// memberships tables, impl/authz/authztest.Tables) on a simulated
// PostgreSQL pool (sim/simdb), pods that each run the production wiring
// (impl/relay: both caches, the write path that invalidates locally and
// publishes, the receiving fan-out) behind a simulated Redis-like bus
// (sim/simbus), admins that change the tables, readers whose every answer
// is recorded, and the truth of every tracked (reader, channel) key at
// every commit instant, for the checkers.
//
// Like every world under scenarios/world, it is built from a *sim.Sim and a
// configuration (NewWorld), runs workloads (Churn and MSChurn, random;
// Race, directed), exposes what happened (History, Tracker.Truth) and
// reports what its own checks find as checks.Violations.
//
// Everything here runs inside simulated tasks and follows the determinism
// contract; the world is built from a *sim.Sim and its PRNG only.
package pods

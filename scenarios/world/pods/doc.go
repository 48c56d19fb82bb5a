// Package pods is the simulated deployment the authorization claims (OC,
// MS) are flown in. It holds the relay database (the source texts'
// channels and memberships tables, impl/authz/authztest.Tables) on a
// simulated PostgreSQL pool (sim/simdb). Its pods each run the production
// wiring (impl/relay: both caches, the write path that invalidates locally
// and publishes, the receiving fan-out) behind a simulated Redis-like bus
// (sim/simbus). Admins change the tables, and readers' every answer is
// recorded. For the checkers it keeps the truth of every tracked (reader,
// channel) key at every commit instant.
//
// Like every world under scenarios/world, it is built from a *sim.Sim and a
// configuration (NewWorld), runs workloads (Churn and MSChurn, random;
// Race, directed), exposes what happened (History, Tracker.Truth) and
// reports what its own checks find as checks.Violations.
//
// Every client operation (World.Accessible, Granted, IsMember, Subscribe,
// Write) asks sim.Sim.Keep(sim.KeepOperation) first and returns ErrSkipped
// when a shrinker dropped it; restarts and cancelled requests are faults
// (sim.KeepFault). A recorded run shows each operation from invocation to
// answer (ReadOp.Event, WriteOp.Event and WriteOp.Commit name them), and
// the staleness checks (World.Staleness) blame the worst read past the
// window checked and the commit that made it stale.
//
// Everything here runs inside simulated tasks and follows the determinism
// contract; the world is built from a *sim.Sim and its PRNG only.
package pods

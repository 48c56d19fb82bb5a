// Package simdb is a simulated database for deterministic simulations: a
// PostgreSQL-like store behind a connection pool, built on package sim.
//
// A DB holds the scenario's tables (any type S), a commit log and a pool of
// connections:
//
//   - Acquire checks out one of PoolSize connections (AcquireFrom: of one
//     of Pools separate pools, as relays each hold their own). It waits in
//     FIFO order while all are busy and gives up when its context ends; a queued
//     caller's CheckedOutAt is the instant another caller released. With
//     Config.Connections a checkout first opens a connection not yet open
//     (or broken by a Fault that Breaks it) and pings one idle too long,
//     as pgxpool does; each is a round trip a Hook can slow or fail.
//   - Query runs a named statement on a connection. It reads one snapshot
//     a drawn lag after it is issued (the server starts it), then takes a
//     latency drawn from a distribution with a healthy tail and a slow tail
//     of faults, then returns. So a write that commits during the latency
//     is not seen, as with a PostgreSQL statement. DefaultLatency is fit
//     to the real server the flight measured (docs/flight.md).
//   - Write applies a change at one virtual instant, after its own latency,
//     and appends a Commit to the log. The log is the checkers' source of
//     truth. Inside the change, CommitInstant tells the scenario the instant
//     so it can record per-key truth.
//   - Faults: transient errors with a configured probability (a
//     *TransientError, see IsTransient). A Hook injects the faults a
//     scenario aims at particular statements (an error, or an exact
//     latency).
//   - Counters: statements and rows per statement name, checkouts, queueing
//     time (total and max), injected errors, commits (Stats, Registry).
//
// Every fault is optional to a shrinker. A latency the Hook fixes, a
// slow-tail latency and an injected error (random or the Hook's) each ask
// sim.Sim.Keep(sim.KeepFault) once decided. A dropped one takes the
// fault-free path (the base latency, no error) without drawing more. A
// recorded run (sim.Config.Record) shows every statement as an interval on
// its connection ("conn N") with its snapshot instant and rows. It shows
// every write as an interval on "db" ("commit #N ..."; Commit.Event and
// CommitEvent name it, for a check to blame), and every fault injected.
//
// Every random choice comes from the run's world source (sim.Sim.Rand), so a
// seed reproduces the same latencies and faults. Swarm picks a fault plan
// per seed; its String goes in the run header (sim.Sim.Note).
//
// The relay's tables and the authz.Pool adapter live in scenarios/, on top
// of this package; it knows nothing about them.
package simdb

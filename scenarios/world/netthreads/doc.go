// Package netthreads is the simulated world of the timer-wheel inactivity
// cop's claims (TW-1..TW-10 of CLAIMS.md). It runs several net threads,
// each an inactivitycop.Handler running its own cop task under the
// deterministic simulator. Their thousands of connections have activity
// that pushes deadlines later, and timeouts set, shortened and disarmed.
// Connections are closed (some by the timeout callback). The world brings
// bursts of simultaneous deadlines larger than the budget, and pod pauses
// and clock jumps longer than the ring.
//
// # The world
//
// Swarm draws a Config from a seed's random source (swarm testing: rings,
// budgets, sizes, pauses and aligned deadlines switched on or off per
// seed). New builds it on a *sim.Sim and Run flies it from the root task:
//
//	res := sim.Run(sim.Config{Seed: seed, MaxVirtual: 72 * time.Hour}, func(s *sim.Sim) {
//		w, err := netthreads.New(s, netthreads.Swarm(s.Rand()))
//		if err == nil {
//			w.FailFast("TW-1") // end the run at the first TW-1 violation
//			err = w.Run()
//		}
//		...  // w.Err("TW-1"), w.History() for package checks, w.Stats()
//	})
//
// Every operation goes through the Handler's API and is mirrored at the
// same instant into a model.FullScan, the reference cop, which passes at
// every tick and restart. The Plan keeps the comparison exact. In the quiet
// window after a pass instant that belongs to the pass and its budget
// continuations, nothing happens (but what the timeout callbacks do, which
// never touches a connection with anything due) and no deadline falls. So
// the reference deciding everything at the pass instant and the wheel
// deciding part of it up to a few milliseconds later see the same state.
// Aligned threads (whose budget never runs out) put deadlines exactly on
// ticks. There a deadline has passed only once the pass is strictly after
// it.
//
// # What the world checks, and what it records
//
// The world's own checks inspect the live cops and are tagged with their
// claim ID (World.Violations, World.Err). FailFast turns the first one of
// chosen claims into the run's failure. The checks are these:
//
//   - TW-1: a live deadline is held by the wheel at that deadline or
//     earlier. It is checked after every operation (the connection it
//     touched), after every pass that fired and at random instants (every
//     connection, under the handler's lock).
//   - TW-2: after every operation both cops hold the same deadlines.
//     Nothing stays armed after the final drain.
//   - TW-6: a connection is in the wheel exactly when it has a live
//     deadline. The wheel's size equals the number of live ones.
//   - TW-10: a connection the reference evicted is closed and out of the
//     wheel.
//
// Everything else is recorded in World.History, one checks.CopHistory per
// thread. It holds every timeout and eviction as its callback reported it,
// at the instant the callback ran, the reference's, the counters as
// registered, and the catch-ups after restarts. The pure checkers of
// package checks judge it, with the bounds the claims table gives:
// checks.CheckTimeouts (TW-2's differential and timeliness, TW-4's
// continuations, TW-10's evictions), checks.CheckCopMetrics (TW-7, TW-8),
// checks.CatchUp.Check (TW-5).
//
// Threads whose Config.MaxConns is smaller than the connections they open
// evict (TW-10); the reference is a model.FullScanQueue with the same
// limit, so both evict the same connection at the same opening.
//
// Timeout callbacks sometimes shorten another connection's deadline
// (Config.ShortenInPassPct): a setter during a cop pass, while the pass may
// still owe continuations. The world counts the rare interleavings its
// checks need with probes (the Probe* constants, sim.Sim.Probe).
//
// # Exact counts
//
// Script runs connections with operations at fixed instants (through the
// Cop's API, one lock hold per instant, mirrored into a full scan). It has
// probes and an Inspect hook at chosen instants. checks.PredictCop states,
// from the TW-1 contract alone, which passes visit a connection and which
// timeouts they fire: the oracle of TW-3, TW-5 and TW-8. Lose and Delay
// inject the TS-4131 failure mode (a lost or late connection) for the
// audit's check, TW-7.
//
// Everything here follows the project's determinism contract: no
// goroutines, clocks, locks or channels of its own, and no map iteration
// whose order matters.
package netthreads

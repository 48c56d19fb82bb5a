// Package netsim is the simulated world of the timer-wheel inactivity cop's
// claims (TW-1..TW-9 of CLAIMS.md): several net threads, each an
// inactivitycop.Handler running its own cop task under the deterministic
// simulator, with thousands of connections whose activity pushes deadlines
// later, timeouts set, shortened and disarmed, connections closed (some by
// the timeout callback), bursts of simultaneous deadlines larger than the
// budget, and pod pauses and clock jumps longer than the ring.
//
// # The world
//
// Swarm draws a Config from a seed's random source (swarm testing: rings,
// budgets, sizes, pauses and aligned deadlines switched on or off per seed);
// New builds it on a *sim.Sim and Run flies it from the root task:
//
//	res := sim.Run(sim.Config{Seed: seed, MaxVirtual: 72 * time.Hour}, func(s *sim.Sim) {
//		w, err := netsim.New(s, netsim.Swarm(s.Rand()))
//		if err == nil {
//			w.FailFast("TW-1") // end the run at the first TW-1 violation
//			err = w.Run()
//		}
//		...  // w.Err("TW-1"), w.Stats(), w.CatchUps()
//	})
//
// Every operation goes through the Handler's API and is mirrored at the
// same instant into a model.FullScan, the reference cop, which passes at
// every tick and restart. The Plan keeps the comparison exact: nothing
// happens, and no deadline falls, in the quiet window after a pass instant
// that belongs to the pass and its budget continuations, so the reference
// deciding everything at the pass instant and the wheel deciding part of it
// up to a few milliseconds later see the same state. Aligned threads (whose
// budget never runs out) put deadlines exactly on ticks, where a deadline
// has passed only once the pass is strictly after it.
//
// # Checks
//
// Each violation is tagged with its claim ID and kept (World.Violations,
// World.Err); FailFast turns the first one of chosen claims into the run's
// failure.
//
//   - TW-1: after every operation (the connection it touched), after every
//     pass that fired and at random instants (every connection, under the
//     handler's lock): a live deadline is held by the wheel at that
//     deadline or earlier.
//   - TW-2: the wheel cops fire exactly the reference's timeouts, never at
//     or before the deadline, at the reference's pass or within its budget
//     continuations (TW-4), and nothing stays armed after the final drain.
//   - TW-5: each restart's catch-up examines min(missed ticks, ring)
//     distinct buckets (CatchUp.Check).
//   - TW-6: a connection is in the wheel exactly when it has a live
//     deadline, and the wheel's size equals the number of live ones.
//   - TW-7: with the audit on, it finds nothing on correct code.
//   - TW-8: the metrics equal what the harness saw: timeouts called back,
//     passes at ticks and restarts plus continuations, visits re-read.
//
// # Exact counts
//
// Script runs connections with operations at fixed instants (through the
// Cop's API, one lock hold per instant, mirrored into a full scan) and
// Predict states, from the TW-1 contract alone, which passes visit a
// connection and which timeouts they fire: the oracle of TW-3 (idle passes
// visit nothing), TW-5 (once per ring until due) and TW-8 (visited and
// fired counts). Lose and Delay inject the TS-4131 failure mode (a lost or
// late connection) for the audit's check, TW-7.
//
// Everything here follows the project's determinism contract: no
// goroutines, clocks, locks or channels of its own, and no map iteration
// whose order matters.
package netsim

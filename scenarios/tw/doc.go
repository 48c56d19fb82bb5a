// Package tw holds the claim checks of the timer-wheel inactivity cop (TW-1
// to TW-10 of CLAIMS.md; source text:
// ../shared/seeds/timer-wheel-inactivity-cop.txt). They fly in the
// simulated net threads of scenarios/world/netthreads around the production
// code of impl/timerwheel and impl/inactivitycop. The timeout checkers of
// package checks (checks/timeouts.go, checks/copvisits.go) judge them
// against the full-scan reference model.FullScan.
//
//	TW-1   rearm_test.go         the wheel never holds a deadline later than the real one: swarm worlds (every step) and a two-round proof under DPOR
//	TW-2   differential_test.go  same timeouts as the full scan (swarm worlds), and lateness driven to one tick from pass instants observed from outside
//	TW-2   racefree_test.go      a handler on real goroutines, under the race detector in make race: active connections never timed out, idle ones once, nothing left; the races the simulator cannot see
//	TW-3   visits_test.go        100,000 idle connections: 0 visits per pass, seen from outside (wheel deadlines, a bare wheel's Deadline calls) and counted
//	TW-4   budget_test.go        the first pass fires exactly the budget, continuations exactly 1 ms apart (callback instants), bursts across budgets, swarm lag
//	TW-4   edges_test.go         every configuration field at its ends, a budget of 1 with its counters, a 1 ns timeout pushed by activity, timeouts refused on a closed connection
//	TW-5   wrap_test.go          once per ring until due (scripted), fast-forward after pauses and clock jumps longer than the ring, catch-up after pauses of a few ticks ending on the grid (swarm)
//	TW-6   schedule_test.go      scheduled exactly when live (swarm), O(1) allocation-free Schedule/Cancel (wall clock)
//	TW-7   audit_test.go         the audit counts injected lost and late connections, and is clean on correct code
//	TW-8   metrics_test.go       the claims table's counter names, registered, equal to what the harness saw (scripted, swarm, real runtime)
//	TW-8   accounted_test.go     every series a cop registers is one the checks compare (a new metric with no comparison fails)
//	TW-9   speed_test.go         the idle-pass ratio against the locked full scan, in one run (wall clock)
//	TW-10  eviction_test.go      a full queue evicts the least recently active connection: one timeout event, counted, out of the wheel (swarm vs model.FullScanQueue, directed)
//
// Every bound comes from scenarios/claims.Table (the tick, the budget, the
// continuation, the visits when none due, the speed-up) and the counter
// names from series.Table. The production configuration under test is
// inactivitycop.DefaultConfig(), which the checks measure, never read. The
// wall-clock parts (TW-6's cost, TW-8's real pass times, TW-9) run
// sequentially outside the simulator. The
// mutants these checks must catch are in scenarios/mutants/tw.go, with the
// tolerance sites (twSites) the audit widens.
package tw

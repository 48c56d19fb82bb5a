// Package dr holds the claim checks of the metrics drain (DR-1 to DR-11 of
// CLAIMS.md; source text: ../shared/seeds/metrics-drain.txt), flown in the
// simulated world of scenarios/world/drain around the production collector
// of impl/collector, and judged by the collector checkers of package checks
// (checks/collector*.go).
//
//	DR-1   partition_test.go  drain, prune and flush buckets = the plain partition by cutoff, at 4,000 and 400,000 points per key
//	DR-1   metrics_test.go    every collector and flush-worker series equals the world's account, on a workload driving every path each counts
//	DR-1   refusals_test.go   New, Query and FlushFunc refuse what they document; a full buffer at exactly its bound; the zero Config holds the seed's 120 s at 38,000 requests/s
//	DR-2   locks_test.go      no point copied under the write lock, counted from outside (lock log and chunk inspections), at both sizes
//	DR-3   locks_test.go      records issued at every yield of the split, the last one included, complete without waiting
//	DR-4   drains_test.go     concurrent drains serialized (probe, porcupine, conservation), and a proof: two drains and a prune
//	DR-5   drains_test.go     points recorded during the split are put back after the kept ones
//	DR-6   chunks_test.go     chunks of at most 1,024 points (reached exactly) with true bounds, one reallocation per record, only straddlers split
//	DR-7   drains_test.go     linearizable but for the documented query deviation, which must be reproduced; queries at every point's bounds at the end
//	DR-7   racefree_test.go   the collector on real goroutines, under the race detector in make race: the races the simulator cannot see
//	DR-9   racefree_test.go   flush workers started and stopped at once on real goroutines, under the race detector: Stop ends the worker whichever came first
//	DR-8   wait_test.go       wall clock: the longest lock wait during a flush, old design against new (real goroutines)
//	DR-9   worker_test.go     a failed flush cycle is logged and counted under the source text's series; the worker goes on; a cycle running at the stop: giving up is no failure, failing is one; the zero period is once a minute; a second Start is refused
//	DR-9   stats_test.go      every stats operation as scraped and snapshotted, help text included; every mistake in a metric definition panics where it is made
//	DR-10  prune_test.go      prune copies at most the straddling chunk per key (reached exactly), at both sizes; out of order, only straddlers
//	DR-11  flush_test.go      the flush output equals the old collector's (model/baseline), replayed in lock order, at both sizes; half the seeds around the Unix epoch
//	DR-11  flushfunc_test.go  through FlushFunc, started off the minute: every bucket reaches the sink once and whole
//
// Every check compares every series the collector and its flush worker
// register with the world's own account (drain.Check, World.Account), and
// each drain's own counts and hold times with the replayed layout and the
// lock log (DR-8: DrainStats.LockHeld and MaxLockHeld).
// Every bound comes from scenarios/claims.Table; the interleaving classes
// the checks require are the probes of scenarios/world/drain (probes.go);
// the mutants these checks must catch are in scenarios/mutants/dr.go, with
// the tolerance sites (drSites) the audit derives widened bounds from.
package dr

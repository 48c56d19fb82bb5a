// Package drain is the simulated world of the metrics-drain claims
// (DR-1..DR-11 of CLAIMS.md, ../shared/seeds/metrics-drain.txt). It runs
// the production collector (impl/collector) on the deterministic simulator,
// with recorder, drainer, pruner and querier tasks and the production flush
// worker with injected failures. Every operation is recorded with its call
// and return into a checks.CollectorHistory. The collector checkers of
// package checks judge it (checks.CheckCollector,
// checks.CollectorLinearizable, checks.CollectorOrder).
//
// # Observing the collector from outside
//
// The collector takes its clock and locks from an rt.Runtime. A World gives
// it a Probe, which wraps the simulator and
//
//   - numbers every acquisition of the collector's write lock and knows when
//     it is held. Under the simulator a task runs without interruption from
//     an acquisition to its next rt call. So the count read right after a
//     Record, Prune or Query returns is that operation's own place in the
//     lock order. The acquisitions no client claims are the drains';
//   - keeps the drain mutex, to probe it with TryLock;
//   - runs a hook at every Yield of the collector. The collector yields
//     only inside a drain, between its two swaps: after each key of the
//     split and once after it. At each one the world can issue records,
//     prunes and queries from other tasks, wait for them, probe the locks
//     and audit the chunks. So the checks guard the whole split, not just
//     its start. The source text's review found that a probe at the start
//     let both lock mutants pass;
//   - with Config.Inspect, walks the collector's buffered map right after
//     each acquisition of the write lock and right before each release. It
//     reads, by reflection over the collector's fields (inspect.go), every
//     chunk's identity, its array's, its stored bounds and its points. The
//     chunk checks count from these what each locked section moved and
//     copied (DR-2, DR-6, DR-10); no counter of the collector enters them.
//
// The interleaving classes the checks require are counted from a checked
// history as sim probes (probes.go). They are a record during the split, a
// second drain waiting on the drain mutex, a prune during the split, a
// drain begun while a prune held the lock, and points put back after the
// kept ones.
//
// # Determinism
//
// Everything here runs inside simulated tasks. It follows the determinism
// contract: no goroutines, clocks, sync or channels, and map iteration only
// where order cannot matter. A seed gives the same world, history and
// verdict every time.
package drain

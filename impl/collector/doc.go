// Package collector buffers metric points per key in memory and hands them
// to a periodic flush by age, without stalling the requests that record
// them. It implements the change described in
// ../shared/seeds/metrics-drain.txt ("stop the metrics drain from stalling
// requests") and serves claims DR-1..DR-11 of CLAIMS.md.
//
// # The problem it solves
//
// Every request records its points through one write lock. A drain that
// partitioned every buffered point (about 120 s of them) into old and young
// while holding that lock would stall every request for the whole partition,
// once per flush.
//
// # Data layout
//
// The points of a key are a list of chunks of at most ChunkPoints (1,024)
// points in recorded order, each with its oldest and newest timestamp
// (DR-6). Record appends to the last chunk and reallocates at most that one
// chunk. Timestamps may arrive in any order.
//
// # The drain
//
// Drain(ctx, cutoff) takes exactly the points with TS < cutoff (a point at
// the cutoff stays), in recorded order per key, as a plain partition of the
// recorded points would (DR-1):
//
//  1. Under the write lock, swap the buffered map out for an empty one.
//  2. Without the lock, split the swapped-out map by cutoff. Chunks entirely
//     older or younger move whole; only chunks that straddle the cutoff are
//     copied (DR-6).
//  3. Under the write lock, swap the younger points back in. Relink after
//     them, per key, the chunks recorded during step 2 (DR-5).
//
// The write lock is held twice, each time for a map swap. No buffered point
// is copied under it (DR-2), and it is free during the whole split (DR-3).
// DrainStats.MovedUnderLock is the drain's own account of what it moved; the
// claim checks measure the same from outside. A drain mutex serializes steps
// 1–3 of concurrent drains (DR-4); Record, Query and Prune never take it. The
// aggregation into Buckets (count, sum, min, max per key and bucket) runs
// after step 3. It gives the buckets the old collector's flush gave (DR-11).
//
// # The prune
//
// Prune(cutoff) discards the points with TS < cutoff under the write lock,
// with the same split. Chunks entirely older are dropped and chunks entirely
// younger stay as they are. Only the chunks that straddle the cutoff are
// copied, however many points are buffered (DR-10).
//
// Documented deviation (DR-7): between steps 1 and 3 an in-memory Query or
// Snapshot does not see the swapped-out points, for as long as the split
// runs. Serve durable metrics from the store the flush writes to. Prune,
// likewise, does not prune the points a drain holds.
//
// # The flush worker
//
// FlushWorker calls a drain function (for example Collector.FlushFunc)
// once per period, on a task of its own, as the seed moved the drain to
// spawn_blocking. A drain that panics or fails is logged and counted in
// worker_errors_total{worker="metrics_flush"}, and the next cycle runs
// (DR-9).
//
// # Runtime
//
// The collector runs on an rt.Runtime: rt.Real() in a service, the
// deterministic simulator in tests. The chunk list and the split are pure
// (no locks, no clock); the Collector and FlushWorker are thin shells.
package collector

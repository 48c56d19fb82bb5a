// Package baseline holds the designs the mechanisms replace, as concurrent
// code on impl/rt. A claim about what the change bought (fewer rows, fewer
// reads, shorter lock holds, fewer lookups) is then measured against the old
// design in the same run, on the same workload:
//
//   - UnionCache: the per-reader union cache accessible channels used
//     before the split (OC-8's baseline).
//   - PointCheckCache: one authoritative point check per channel, the
//     membership cache's predecessor (MS-1, MS-11).
//   - OldCollector: the metrics collector whose drain partitioned every
//     buffered point under the write lock (DR-8, DR-11).
//   - FullScanLocked: the inactivity cop's full scan with the old per-
//     connection thread lookup and mutex try-lock (TW-9).
//
// They are baselines, not specifications: the pure sequential specifications
// the checkers judge against live in package model.
package baseline

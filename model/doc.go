// Package model holds the pure sequential specifications the checkers judge
// the production code against: what a correct implementation may answer,
// with time as an input and no concurrency of its own.
//
//   - Register: independent boolean registers per key, the porcupine model
//     of an authorization answer (OC-6, MS-3, and the staleness
//     cross-check).
//   - Partition, Drained, GroupByKey, Aggregate: the plain partition by cutoff
//     a drain, a prune and a flush must equal (DR-1, DR-11); CollectorStep
//     and CollectorModel: the collector's sequential specification and its
//     porcupine model (DR-7).
//   - FullScan: the reference inactivity cop, which examines every
//     connection at every pass (TW-2's differential).
//
// The designs the mechanisms replace, kept as performance baselines, are in
// model/baseline.
package model

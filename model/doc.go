// Package model holds the pure sequential specifications the checkers judge
// the production code against. Each says what a correct implementation may
// answer, with time as an input and no concurrency of its own.
//
//   - Register: independent boolean registers per key. It is the porcupine
//     model of an authorization answer (OC-6, MS-3, the staleness
//     cross-check).
//   - Partition, Drained, GroupByKey, Aggregate: the plain partition by
//     cutoff. A drain, a prune and a flush must equal it (DR-1, DR-11).
//   - CollectorStep and CollectorModel: the collector's sequential
//     specification and its porcupine model (DR-7).
//   - FullScan: the reference inactivity cop. It examines every connection
//     at every pass (TW-2's differential).
//
// The designs the mechanisms replace, kept as performance baselines, are in
// model/baseline.
package model

// Package oc holds the claim checks of the accessible-channels cache (OC-1
// to OC-10 of CLAIMS.md; source text: ../shared/seeds/open-channels-cache.txt),
// flown in the simulated relay pods of scenarios/world/pods around the
// production code of impl/accesschannels and impl/relay.
//
//	OC-1   union_test.go      cached answer = uncached union = the tables, Accessible and Granted; also with one read in five failing
//	OC-1   sharedread_test.go readers who joined a read that failed or was abandoned: the union, or the read's error
//	OC-1   abandonchain_test.go a lookup in front of callers who keep abandoning the reads it joins ends while they go on
//	OC-1   racefree_test.go   the cache on real goroutines, under the race detector in make race: the races the simulator cannot see
//	OC-2   window_test.go     lost invalidation: non-member grants < 1 s stale (churn, and a race to the bound per revocation kind)
//	OC-2   slowread_test.go   a reader who asks while a read older than the window runs is not given its answer
//	OC-2   sharedread_test.go a failed or abandoned shared read over an aged cached open set (a channel revoked meanwhile) grants nothing from it
//	OC-3   window_test.go     the window is real: a new reader is granted a revoked channel up to the bound
//	OC-4   racedfill_test.go  a fill that raced a drop on one pod is still < 1 s stale (churn, race, and a proof)
//	OC-5   scope_test.go      invalidations drop exactly the halves they concern
//	OC-5   writerpod_test.go  the writing pod's own lookups see its write before its invalidation comes back (or never does); relay counters
//	OC-6   debt_test.go       the documented unfenced member half: porcupine finds it
//	OC-7   member_test.go     member grants keep the 10 s window (churn, race, lost membership)
//	OC-8   load_test.go       a cold burst reads ~20x fewer rows than union-per-reader
//	OC-9   metrics_test.go    the source text's counters count what happened, as scraped through the Prometheus parser
//	OC-9   capacity_test.go   each half filled to exactly its capacity keeps every entry (every second read a hit, as scraped); one more evicts only the least recent
//	OC-9   sharedread_test.go one miss per half per lookup around failed and abandoned shared reads (absent cold, expired aged), as scraped
//	OC-9   flows_test.go      every lookup flow x database call (pods.Flows) under an error, a cancellation and a slow answer: answers and every counter
//	OC-10  community_test.go  never a channel of another community
//
// Every bound comes from scenarios/claims.Table; the mutants these checks
// must catch are in scenarios/mutants/oc.go.
package oc

// Package ms holds the claim checks of the membership snapshot cache (MS-1
// to MS-13 of CLAIMS.md; source text:
// ../shared/seeds/membership-snapshot-cache.txt), flown in the simulated
// relay pods of scenarios/world/pods around the production code of
// impl/membership and impl/relay.
//
//	MS-1   cold_test.go        a cold client in N channels causes one read
//	MS-2   freshness_test.go   snapshots are < 10 s old from checkout (churn, and a race to the bound for grants and denials)
//	MS-2   inspect_test.go     Inspect says fresh until the freshness from checkout ends an entry, and not fresh from that instant on
//	MS-3   fence_test.go       an old load cannot repopulate an invalidated entry, per-user or community-wide (porcupine, and proofs with two loads)
//	MS-3   racefree_test.go    the same on real goroutines, under the race detector in make race: the races the simulator cannot see
//	MS-4   boundary_test.go    16,384 IDs per snapshot, 16,385 fetched, a marker above (and only while above: it expires)
//	MS-5   cold_test.go        concurrent cold checks of one user share one read
//	MS-6   fault_test.go       a lock-wait timeout is an authoritative point check, counted
//	MS-6   cancelwait_test.go  a request cancelled while it waits is no timeout: its deadline's error, nothing counted
//	MS-7   fault_test.go       failures propagate; cancellation releases the user lock
//	MS-7   flows_test.go       every check flow x database call (pods.Flows) under an error, a cancellation and a slow answer: answers and every counter
//	MS-8   budget_test.go      the retained weight stays within 64 MiB, measured from outside
//	MS-8   evictmany_test.go   one maximum-size load into a full cache of smaller snapshots evicts as many as it must
//	MS-8   maintain_test.go    Maintain removes exactly the snapshots past the freshness bound, and counts them
//	MS-9   invalidate_test.go  invalidations drop exactly the user's or community's entries; channel_id kept
//	MS-9   writerpod_test.go   the writing pod's own checks see its write before its invalidation comes back (or never does); relay counters
//	MS-10  freshness_test.go   a new grant is missing on another relay < 10 s
//	MS-11  load_test.go        far fewer reads and checkouts than per-channel checks
//	MS-12  subscribe_test.go   a subscription confirms a cached denial against the database
//	MS-13  alloc_test.go       a hit allocates nothing
//
// Every bound comes from scenarios/claims.Table; the mutants these checks
// must catch are in scenarios/mutants/ms.go.
package ms

package claims

import (
	"fmt"
	"strings"
)

// The seeds' numbers: every bound a claim check compares with, as the
// source texts state it (../shared/seeds/, quoted in Source). Checks take
// their bounds from here and nowhere else: no check, oracle, predictor or
// report text reads a Default* constant or any other value from impl to
// decide what is right. A design that widens a bound by 1% must fail its
// claim, so a bound here is the number the source text promises, not the
// one the code happens to implement (TestImplDefaultsMatchTheTable, in the
// audit package, says when the two differ; no verdict depends on it).

// Table is every number the claim checks use, claim by claim.
var Table = []Bound{
	{Claim: "OC-2", Name: "open set max age", Value: 1, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "open-channels-cache.txt: \"readers use it only for OPEN_CHANNELS_MAX_AGE (1 s) after that\", counted from \"when its database read began\""},
	{Claim: "OC-3", Name: "window observed", Value: 1, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "open-channels-cache.txt: \"a new reader with no cache entry ... is still granted\" inside OPEN_CHANNELS_MAX_AGE (1 s)"},
	{Claim: "OC-4", Name: "raced fill max age", Value: 1, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "open-channels-cache.txt: \"a fill that raced a drop is still at most 1 s stale\""},
	{Claim: "OC-6", Name: "member ttl", Value: 10, Unit: Seconds, Kind: AtMost,
		Source: "open-channels-cache.txt: the member half keeps its unfenced read-then-insert, bounded by the pre-existing 10 s TTL"},
	{Claim: "OC-7", Name: "member ttl", Value: 10, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "open-channels-cache.txt: \"Readers with a cached entry already had a 10 s window on main\" (the TTL counts from the entry's insertion, so a fill's own read adds to it)"},
	{Claim: "OC-8", Name: "row reduction", Value: 20, Unit: Ratio, Kind: AtLeast,
		Source: "open-channels-cache.txt: \"DB tuples returned/s 1.04M | 43k | 49k\" (about 21-24x)"},
	{Claim: "OC-8", Name: "open-set reads per second per pod", Value: 1, Unit: Count, Kind: AtMost,
		Source: "open-channels-cache.txt: \"Expect at most about one per second per active community per pod\""},
	{Claim: "MS-1", Name: "reads per cold client", Value: 1, Unit: Count, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"A cold client in 280 channels can issue 280 separate membership reads ... share one read\""},
	{Claim: "MS-2", Name: "freshness", Value: 10, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "membership-snapshot-cache.txt: \"10-second freshness bound, measured from connection checkout\""},
	{Claim: "MS-4", Name: "snapshot ids", Value: 16384, Unit: Count, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"Each snapshot holds at most 16,384 UUIDs\""},
	{Claim: "MS-4", Name: "fetch ids", Value: 16385, Unit: Count, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"Fetch at most 16,385 membership IDs. Above 16,384, retain a PointChecks marker\""},
	{Claim: "MS-5", Name: "reads per concurrent cold checks", Value: 1, Unit: Count, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"Requests for that user share its lock. Recheck after acquiring the lock.\""},
	{Claim: "MS-8", Name: "budget", Value: 64 << 20, Unit: Bytes, Kind: AtMost, Tight: true,
		Source: "membership-snapshot-cache.txt: \"a 64 MiB weighted budget per relay\""},
	{Claim: "MS-8", Name: "max list payload", Value: 256 << 10, Unit: Bytes, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"Each maximum-size list contains 256 KiB of UUIDs plus overhead\""},
	{Claim: "MS-13", Name: "allocations per hit", Value: 0, Unit: Count, Kind: Exactly,
		Source: "membership-snapshot-cache.txt: \"Cache hits allocate neither query.\""},
	{Claim: "MS-10", Name: "freshness", Value: 10, Unit: Seconds, Kind: AtMost, Tight: true, Strict: true,
		Source: "membership-snapshot-cache.txt: \"can be absent from another relay's cached snapshot until the Redis invalidation arrives, or until the 10-second freshness bound expires\""},
	{Claim: "MS-11", Name: "fewer per-channel reads", Value: 99, Unit: Percent, Kind: AtLeast,
		Source: "membership-snapshot-cache.txt: \"The cache reduced per-channel membership reads by 99.45%\""},
	{Claim: "MS-11", Name: "fewer checkouts", Value: 72.6, Unit: Percent, Kind: AtLeast,
		Source: "membership-snapshot-cache.txt: \"authorization checkouts by 72.6–73.2%\" (73.76–74.23% at the current head)"},
	{Claim: "DR-1", Name: "points on the wrong side of the cutoff", Value: 0, Unit: Count, Kind: Exactly,
		Source: "metrics-drain.txt: \"the drained, kept, pruned, and aggregated points match a plain partition by cutoff\" (a point older than the cutoff is drained, the others kept)"},
	{Claim: "DR-2", Name: "points copied under the write lock", Value: 0, Unit: Count, Kind: Exactly,
		Source: "metrics-drain.txt: \"The drain now takes the lock twice and copies no buffered point under it\""},
	{Claim: "DR-6", Name: "chunk points", Value: 1024, Unit: Count, Kind: AtMost, Tight: true,
		Source: "metrics-drain.txt: \"Each key's points are kept in chunks of at most 1024\""},
	{Claim: "DR-8", Name: "lock wait", Value: 0.0006, Unit: Seconds, Kind: AtMost,
		Source: "metrics-drain.txt: \"the longest wait for the metrics lock during a flush went from 158 to 382 ms to 0.6 ms or less\""},
	{Claim: "DR-8", Name: "old/new lock wait", Value: 100, Unit: Ratio, Kind: AtLeast,
		Source: "metrics-drain.txt: \"from 158 to 382 ms to 0.6 ms or less\" (263x to 637x with about 32 million buffered points; we ask for two orders of magnitude with 1.6 million)"},
	{Claim: "DR-10", Name: "copied per key", Value: 1024, Unit: Count, Kind: AtMost, Tight: true,
		Source: "metrics-drain.txt: \"The prune uses the same split, so its pass under the lock is now over chunks, not points\"; the split \"moves whole chunks and splits only the chunks that straddle the cutoff\" (one chunk of at most 1024 per key)"},
	{Claim: "TW-2", Name: "tick", Value: 1, Unit: Seconds, Kind: AtMost, Tight: true,
		Source: "timer-wheel-inactivity-cop.txt: the cop runs \"once a second\"; a connection times out within one tick plus budget continuations"},
	{Claim: "TW-3", Name: "visits when none due", Value: 0, Unit: Count, Kind: Exactly,
		Source: "timer-wheel-inactivity-cop.txt: \"the number of get_mutex() and get_thread() calls per pass falls from N to 0\""},
	{Claim: "TW-4", Name: "budget", Value: 4096, Unit: Count, Kind: Exactly,
		Source: "timer-wheel-inactivity-cop.txt: \"proxy.config.net.inactivity_cop_budget (default 4096)\""},
	{Claim: "TW-4", Name: "continuation", Value: 0.001, Unit: Seconds, Kind: Exactly,
		Source: "timer-wheel-inactivity-cop.txt: \"When a pass hits the budget it yields to the poll loop and continues 1 ms later\""},
	{Claim: "TW-9", Name: "pass speedup", Value: 10_000, Unit: Ratio, Kind: AtLeast,
		Source: "timer-wheel-inactivity-cop.txt: \"a pass drops from ~15.9 ms to ~0.1 µs\" (~159,000x; we ask for four orders of magnitude, the figures being approximate and the machine another)"},
	{Claim: "LF-5", Name: "target path locks per span enter or exit", Value: 0, Unit: Count, Kind: Exactly,
		Source: "open-channels-cache.txt: \"Plain target=level directive lists now filter through tracing_subscriber::filter::Targets, which keeps no per-span state\""},
	{Claim: "LF-5", Name: "span-aware read locks per span enter or exit", Value: 2, Unit: Count, Kind: Exactly,
		Source: "open-channels-cache.txt: \"EnvFilter ... takes a shared RwLock read on every span enter and exit\" and \"the relay installs two per-layer EnvFilters (logs and OTEL)\""},
}

// Get returns the named bound of a claim. A missing bound is a programming
// error in a check: it panics with the names the claim has.
func Get(claim, name string) Bound {
	var names []string
	for _, b := range Table {
		if b.Claim == claim {
			if b.Name == name {
				return b
			}
			names = append(names, b.Name)
		}
	}
	panic(fmt.Sprintf("claims: %s has no bound %q (it has %s)", claim, name, strings.Join(names, ", ")))
}

package claims

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The seeds' numbers: every bound a claim check compares with, as the
// source texts state it (../shared/seeds/, quoted in Source). Checks take
// their bounds from here and nowhere else: no check, oracle, predictor or
// report text reads a Default* constant or any other value from impl to
// decide what is right. A design that widens a bound by 1% must fail its
// claim, so a bound here is the number the source text promises, not the
// one the code happens to implement (TestImplDefaultsMatchTheTable, in the
// audit package, says when the two differ; no verdict depends on it).

// Unit is what a bound counts.
type Unit string

const (
	Seconds Unit = "s"
	Count   Unit = "count"
	Bytes   Unit = "bytes"
	Ratio   Unit = "x"
	Percent Unit = "%"
)

// Kind says how a measured figure is compared with a bound.
type Kind uint8

const (
	// AtMost: the worst figure over every seed must not exceed the bound.
	AtMost Kind = iota + 1
	// AtLeast: the worst (smallest) figure must reach the bound (ratios).
	AtLeast
	// Exactly: the figure must equal the bound (counts the design hits
	// exactly: 16,385 rows fetched, 0 visits).
	Exactly
)

// String names the kind as records carry it.
func (k Kind) String() string {
	switch k {
	case AtMost:
		return "at-most"
	case AtLeast:
		return "at-least"
	case Exactly:
		return "exactly"
	}
	return "none"
}

// Bound is one number of a source text.
type Bound struct {
	Claim string // the claim it belongs to: "OC-2"
	Name  string // what it is, unique within the claim: "open set max age"
	Value float64
	Unit  Unit
	Kind  Kind
	// Tight marks a bound the design is allowed to reach: a check of it
	// must drive its worst case to the bound on purpose (directed
	// constructions, search), and the audit fails when the tightness
	// (worst / bound) stays below MinTightness. Only a check that reaches
	// its bound can tell it from a bound 1% wider.
	Tight bool
	// Strict marks a half-open window: the design serves an answer only
	// while its age is below the bound ("for 1 s after the read began"), so
	// an answer exactly at the bound is already outside it and the figure
	// must stay strictly below it. A comparison flipped from < to ≤ in the
	// code is then a violation the checks can see.
	Strict bool
	// Source quotes the source text the number comes from.
	Source string
}

// MinTightness is how close to its bound every tight check must get under
// the correct code (worst / bound).
const MinTightness = 0.995

// Duration is the bound as a duration (Unit Seconds).
func (b Bound) Duration() time.Duration {
	return time.Duration(math.Round(b.Value * float64(time.Second)))
}

// Int is the bound as an integer (counts and bytes).
func (b Bound) Int() int64 { return int64(math.Round(b.Value)) }

// Holds reports whether a measured figure satisfies the bound.
func (b Bound) Holds(v float64) bool {
	switch b.Kind {
	case AtMost:
		if b.Strict {
			return v < b.Value
		}
		return v <= b.Value
	case AtLeast:
		return v >= b.Value
	case Exactly:
		return v == b.Value
	}
	return false
}

// Tightness is how close a measured worst case came to the bound: worst /
// bound for an upper bound (1 means the check drove the design to its
// limit), 1 for an exact count that was hit.
func (b Bound) Tightness(worst float64) float64 {
	switch {
	case b.Kind == Exactly && worst == b.Value:
		return 1
	case b.Kind == Exactly:
		return 0
	case b.Value == 0:
		return 0
	}
	return worst / b.Value
}

// Format renders a figure in the bound's unit.
func (b Bound) Format(v float64) string { return FormatValue(v, b.Unit) }

// String is the bound in words: "< 1s", "≤ 16385", "≥ 20x".
func (b Bound) String() string {
	op := map[Kind]string{AtMost: "≤", AtLeast: "≥", Exactly: "="}[b.Kind]
	if b.Kind == AtMost && b.Strict {
		op = "<"
	}
	return op + " " + b.Format(b.Value)
}

// FormatValue renders a figure with its unit.
func FormatValue(v float64, u Unit) string {
	if math.IsInf(v, 0) || math.Abs(v) >= Phantom {
		return "∞ (an answer that was never true)"
	}
	switch u {
	case Seconds:
		return time.Duration(math.Round(v * float64(time.Second))).String()
	case Bytes:
		switch {
		case v >= 1<<20 && math.Mod(v, 1<<20) == 0:
			return fmt.Sprintf("%.0f MiB", v/(1<<20))
		case v >= 1<<10 && math.Mod(v, 1<<10) == 0:
			return fmt.Sprintf("%.0f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case Ratio:
		if v >= 100 {
			return fmt.Sprintf("%.0fx", v) // 10000x, not 1e+04x
		}
		return fmt.Sprintf("%.3gx", v)
	case Percent:
		return fmt.Sprintf("%.4g%%", v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// Phantom is the figure of an answer that was never true: its staleness is
// infinite. (JSON has no infinity; every bound is far below this.)
const Phantom = 1e15

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

// BoundsOf returns every bound of a claim.
func BoundsOf(claim string) []Bound {
	var out []Bound
	for _, b := range Table {
		if b.Claim == claim {
			out = append(out, b)
		}
	}
	return out
}

// Metric is one series a source text names: the name (without the
// deployment's namespace prefix, "buzz_" in the relay, which its exporter
// adds) and its label, if any.
type Metric struct {
	Claim string
	Name  string // open_channels_cache_misses_total
	Label string // reason, or ""
	Value string // "expired", or ""
	// Kind is the Prometheus type the series must be exported as:
	// "counter" for a count that only grows (every _total, and TW-8's
	// passes, visited, fired, pass time and exhausted budgets, which the
	// seed lists beside them as running totals), "gauge" for a figure
	// that is not a running total (TW-8's longest pass: a rate() over it
	// means nothing).
	Kind string
}

// Series is the metric as a stats.Registry snapshot keys it:
// name{label="value"}.
func (m Metric) Series() string {
	if m.Label == "" {
		return m.Name
	}
	return fmt.Sprintf("%s{%s=%q}", m.Name, m.Label, m.Value)
}

// Metrics is every series the source texts name.
var Metrics = []Metric{
	{"OC-9", "open_channels_cache_hits_total", "", "", "counter"},
	{"OC-9", "open_channels_cache_misses_total", "reason", "absent", "counter"},
	{"OC-9", "open_channels_cache_misses_total", "reason", "expired", "counter"},
	{"OC-9", "accessible_channels_cache_hits_total", "", "", "counter"},
	{"OC-9", "accessible_channels_cache_misses_total", "", "", "counter"},
	{"MS-6", "membership_cache_fallbacks_total", "reason", "wait_timeout", "counter"},
	{"MS-4", "membership_cache_fallbacks_total", "reason", "oversize", "counter"},
	{"MS-1", "membership_cache_hits_total", "", "", "counter"},
	{"MS-1", "membership_cache_misses_total", "", "", "counter"},
	{"TW-8", "inactivity_cop_passes", "", "", "counter"},
	{"TW-8", "inactivity_cop_visited", "", "", "counter"},
	{"TW-8", "inactivity_cop_fired", "", "", "counter"},
	{"TW-8", "inactivity_cop_pass_time_us", "", "", "counter"},
	{"TW-8", "inactivity_cop_pass_max_us", "", "", "gauge"},
	{"TW-8", "inactivity_cop_budget_exhausted", "", "", "counter"},
	{"DR-9", "worker_errors_total", "worker", "metrics_flush", "counter"},
}

// MetricsNamed returns the metrics whose name starts with prefix.
func MetricsNamed(prefix string) []Metric {
	var out []Metric
	for _, m := range Metrics {
		if strings.HasPrefix(m.Name, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// MetricsOf returns the series of the metrics whose name starts with
// prefix ("open_channels_cache", "membership_cache", "inactivity_cop").
func MetricsOf(prefix string) []string {
	var out []string
	for _, m := range MetricsNamed(prefix) {
		out = append(out, m.Series())
	}
	return out
}

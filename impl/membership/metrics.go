package membership

import "github.com/windtunnel/windtunnel/impl/stats"

// Metric names, from the seed (without its service prefix).
const (
	// MetricHits counts channel checks served from a fresh snapshot.
	MetricHits = "membership_cache_hits_total"
	// MetricMisses counts bounded full-set load attempts (one per load
	// started, whatever its outcome).
	MetricMisses = "membership_cache_misses_total"
	// MetricFallbacks counts checks answered by a database point check,
	// labelled reason="oversize" (MS-4) or reason="wait_timeout" (MS-6).
	MetricFallbacks = "membership_cache_fallbacks_total"

	// ReasonOversize labels point checks for users above MaxSnapshotIDs.
	ReasonOversize = "oversize"
	// ReasonWaitTimeout labels point checks after a lock wait gave up.
	ReasonWaitTimeout = "wait_timeout"

	// MetricConfirms counts subscription denials confirmed against the
	// database (MS-12), and MetricConfirmedMembers those the database
	// overturned: the snapshot lacked a granted membership.
	MetricConfirms         = "membership_cache_subscription_confirms_total"
	MetricConfirmedMembers = "membership_cache_subscription_confirmed_members_total"
)

type metrics struct {
	reg                   *stats.Registry
	hits, misses          *stats.Counter
	oversize, waitTimeout *stats.Counter
	confirms              *stats.Counter
	confirmedMember       *stats.Counter
}

func newMetrics() metrics {
	m := metrics{reg: &stats.Registry{}, hits: &stats.Counter{}, misses: &stats.Counter{}, confirms: &stats.Counter{}, confirmedMember: &stats.Counter{}}
	fallbacks := stats.NewCounterVec("reason", ReasonOversize, ReasonWaitTimeout)
	m.oversize, m.waitTimeout = fallbacks.With(ReasonOversize), fallbacks.With(ReasonWaitTimeout)
	m.reg.Counter(MetricHits, "Channel checks served from a fresh membership snapshot.", m.hits)
	m.reg.Counter(MetricMisses, "Bounded full-set membership load attempts.", m.misses)
	m.reg.CounterVec(MetricFallbacks, "Channel checks answered by an authoritative database point check, by reason.", fallbacks)
	m.reg.Counter(MetricConfirms, "Subscription denials confirmed against the database.", m.confirms)
	m.reg.Counter(MetricConfirmedMembers, "Subscription denials the database overturned (a stale snapshot lacked the membership).", m.confirmedMember)
	return m
}

// Metrics returns the cache's metrics registry, for exposition
// (WriteText) or for tests (Snapshot).
func (c *Cache) Metrics() *stats.Registry { return c.m.reg }

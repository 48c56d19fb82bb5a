package accesschannels

import "github.com/windtunnel/windtunnel/impl/stats"

// Metric names, from the seed (which prefixes them with buzz_). OC-9.
const (
	MetricOpenHits     = "open_channels_cache_hits_total"
	MetricOpenMisses   = "open_channels_cache_misses_total"
	MetricMemberHits   = "accessible_channels_cache_hits_total"
	MetricMemberMisses = "accessible_channels_cache_misses_total"
)

// Miss reasons of MetricOpenMisses.
const (
	// ReasonAbsent: no open set was cached for the community (never read,
	// dropped by an invalidation, evicted, or past its TTL, which removes an
	// entry as Moka's TTL did).
	ReasonAbsent = "absent"
	// ReasonExpired: an open set was cached but its read began MaxAgeOpen or
	// more ago.
	ReasonExpired = "expired"
)

// Stats is a snapshot of the cache's counters. Every lookup (Accessible or
// Granted) adds exactly one member-half hit or miss and one open-half hit or
// miss; AccessibleUncached adds nothing.
type Stats struct {
	// MemberHits and MemberMisses count the per-reader member half only:
	// the seed kept the accessible_channels_* names but changed their meaning
	// from whole-lookup to member-half (OC-9).
	MemberHits, MemberMisses int64
	// OpenHits counts lookups served from a fresh cached open set.
	OpenHits int64
	// OpenMissesAbsent and OpenMissesExpired count lookups that read the open
	// set (or joined a read in flight), by reason.
	OpenMissesAbsent, OpenMissesExpired int64
}

type metrics struct {
	reg                      stats.Registry
	memberHits, memberMisses stats.Counter
	openHits                 stats.Counter
	openMisses               *stats.CounterVec
	openAbsent, openExpired  *stats.Counter
}

func newMetrics() *metrics {
	m := &metrics{openMisses: stats.NewCounterVec("reason", ReasonAbsent, ReasonExpired)}
	m.openAbsent = m.openMisses.With(ReasonAbsent)
	m.openExpired = m.openMisses.With(ReasonExpired)
	m.reg.Counter(MetricOpenHits, "Lookups served from a cached open-channel set younger than OPEN_CHANNELS_MAX_AGE.", &m.openHits)
	m.reg.CounterVec(MetricOpenMisses, "Lookups that found no usable cached open-channel set, by reason.", m.openMisses)
	m.reg.Counter(MetricMemberHits, "Per-reader member-channel half served from cache (member half only).", &m.memberHits)
	m.reg.Counter(MetricMemberMisses, "Per-reader member-channel half read from the database (member half only).", &m.memberMisses)
	return m
}

func (m *metrics) snapshot() Stats {
	return Stats{
		MemberHits:        m.memberHits.Value(),
		MemberMisses:      m.memberMisses.Value(),
		OpenHits:          m.openHits.Value(),
		OpenMissesAbsent:  m.openAbsent.Value(),
		OpenMissesExpired: m.openExpired.Value(),
	}
}

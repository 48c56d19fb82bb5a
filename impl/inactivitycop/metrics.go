package inactivitycop

import "github.com/windtunnel/windtunnel/impl/stats"

// Metrics are the cop's counters (TW-8), under the seed's names once
// registered. Every count is exact; only the pass times depend on the clock
// (under the simulator a pass takes no virtual time, so they stay 0).
type Metrics struct {
	// Passes counts passes, continuations included.
	Passes stats.Counter
	// Visited counts connections whose deadline a pass re-read.
	Visited stats.Counter
	// Fired counts timeouts fired.
	Fired stats.Counter
	// PassTimeUS sums the time passes took, in microseconds.
	PassTimeUS stats.Counter
	// PassMaxUS is the longest pass, in microseconds.
	PassMaxUS stats.Gauge
	// BudgetExhausted counts passes that stopped at the budget (TW-4).
	BudgetExhausted stats.Counter
	// Lookups counts per-connection mutex/thread lookups: one per visited
	// connection. The full-scan cop did one per open connection (TW-3).
	Lookups stats.Counter
	// AuditLost and AuditLate count what the opt-in audit found (TW-7).
	AuditLost, AuditLate stats.Counter
	// Evicted counts connections evicted from a full queue, each reported
	// to its handler as an Evicted timeout (TW-10). They are not in Fired,
	// which counts the timeouts passes fire.
	Evicted stats.Counter
}

// Register names the metrics in r: inactivity_cop_passes, _visited,
// _fired, _pass_time_us, _pass_max_us and _budget_exhausted from the seed,
// plus inactivity_cop_lookups, inactivity_cop_audit_lost / _late and
// inactivity_cop_evicted.
func (m *Metrics) Register(r *stats.Registry) {
	r.Counter("inactivity_cop_passes", "Inactivity cop passes, continuations included.", &m.Passes)
	r.Counter("inactivity_cop_visited", "Connections whose deadline a cop pass re-read.", &m.Visited)
	r.Counter("inactivity_cop_fired", "Timeouts fired by the inactivity cop.", &m.Fired)
	r.Counter("inactivity_cop_pass_time_us", "Total time spent in cop passes, microseconds.", &m.PassTimeUS)
	r.Gauge("inactivity_cop_pass_max_us", "Longest cop pass, microseconds.", &m.PassMaxUS)
	r.Counter("inactivity_cop_budget_exhausted", "Cop passes that stopped at the budget and continued 1 ms later.", &m.BudgetExhausted)
	r.Counter("inactivity_cop_lookups", "Per-connection mutex/thread lookups done by cop passes.", &m.Lookups)
	r.Counter("inactivity_cop_audit_lost", "Connections with a live deadline the wheel does not hold (audit).", &m.AuditLost)
	r.Counter("inactivity_cop_audit_late", "Connections the wheel holds later than their deadline (audit).", &m.AuditLate)
	r.Counter("inactivity_cop_evicted", "Connections evicted from a full connection queue, each reported as a timeout.", &m.Evicted)
}

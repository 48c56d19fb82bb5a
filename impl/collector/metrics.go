package collector

import "github.com/windtunnel/windtunnel/impl/stats"

// Metric names. The seed names only the worker error count; the others
// follow its vocabulary (record, drain, prune, flush).
const (
	MetricRecorded       = "metrics_collector_points_recorded_total"
	MetricRejected       = "metrics_collector_points_rejected_total" // reason="invalid"|"full"
	MetricBuffered       = "metrics_collector_buffered_points"
	MetricPruned         = "metrics_collector_points_pruned_total"
	MetricDrains         = "metrics_collector_drains_total"
	MetricDrained        = "metrics_collector_points_drained_total"
	MetricMovedUnderLock = "metrics_collector_drain_moved_under_lock_total"
	MetricLockHoldMaxNs  = "metrics_collector_drain_lock_hold_max_ns"
	MetricWorkerCycles   = "worker_cycles_total" // worker="metrics_flush"
	MetricWorkerErrors   = "worker_errors_total" // worker="metrics_flush"
)

type metrics struct {
	recorded       stats.Counter
	rejected       *stats.CounterVec
	buffered       stats.Gauge
	pruned         stats.Counter
	drains         stats.Counter
	drained        stats.Counter
	movedUnderLock stats.Counter
	lockHoldMaxNs  stats.Gauge
}

func newMetrics() metrics {
	return metrics{rejected: stats.NewCounterVec("reason", "invalid", "full")}
}

func (m *metrics) register(r *stats.Registry) {
	r.Counter(MetricRecorded, "Points recorded into the collector.", &m.recorded)
	r.CounterVec(MetricRejected, "Points refused by Record.", m.rejected)
	r.Gauge(MetricBuffered, "Points buffered, including those of a drain in progress.", &m.buffered)
	r.Counter(MetricPruned, "Points discarded by Prune.", &m.pruned)
	r.Counter(MetricDrains, "Completed drains.", &m.drains)
	r.Counter(MetricDrained, "Points taken by drains.", &m.drained)
	r.Counter(MetricMovedUnderLock, "Points relinked or copied while a drain held the write lock (DR-2).", &m.movedUnderLock)
	r.Gauge(MetricLockHoldMaxNs, "Longest single write-lock hold of a drain, in nanoseconds.", &m.lockHoldMaxNs)
}

func (m *metrics) observe(st *DrainStats) {
	m.drains.Inc()
	m.drained.Add(st.Drained)
	m.movedUnderLock.Add(st.MovedUnderLock)
	m.lockHoldMaxNs.SetMax(int64(st.MaxLockHeld))
}

package pgstore

import "github.com/windtunnel/windtunnel/impl/stats"

// Metric names. The seeds name no database metrics; these count what their
// A/B reports counted ("authorization pool checkouts", membership query
// calls, tuples returned), so the same comparisons can be made on a real
// deployment (MS-11, OC-8).
const (
	MetricCheckouts         = "pgstore_checkouts_total"
	MetricAcquireWaitMicros = "pgstore_acquire_wait_microseconds_total"
	MetricConnects          = "pgstore_connects_total"
	MetricConnectErrors     = "pgstore_connect_errors_total"
	MetricDiscards          = "pgstore_connections_discarded_total"
	MetricIdlePings         = "pgstore_idle_pings_total"
	MetricConnectMicros     = "pgstore_connect_microseconds_total"
	MetricOpenConnections   = "pgstore_open_connections"
	MetricStatements        = "pgstore_statements_total"
	MetricStatementErrors   = "pgstore_statement_errors_total"
	MetricRows              = "pgstore_rows_total"
	statementLabel          = "statement"
)

var statementNames = []string{StmtMemberChannels, StmtListedOpenChannels, StmtActiveMemberships, StmtIsActiveMember}

type metrics struct {
	reg                               stats.Registry
	checkouts, acquireWaitMicros      stats.Counter
	connects, connectErrors, discards stats.Counter
	pings, connectMicros              stats.Counter
	open                              stats.Gauge
	statements, statementErrors, rows *stats.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		statements:      stats.NewCounterVec(statementLabel, statementNames...),
		statementErrors: stats.NewCounterVec(statementLabel, statementNames...),
		rows:            stats.NewCounterVec(statementLabel, statementNames...),
	}
	m.reg.Counter(MetricCheckouts, "Connections handed out by Acquire.", &m.checkouts)
	m.reg.Counter(MetricAcquireWaitMicros, "Time spent in the pool's Acquire (waiting for a free connection, dialling or pinging one), in microseconds.", &m.acquireWaitMicros)
	m.reg.Counter(MetricConnects, "Connections opened.", &m.connects)
	m.reg.Counter(MetricConnectErrors, "Failed attempts to open a connection.", &m.connectErrors)
	m.reg.Counter(MetricDiscards, "Connections closed (broken or busy at release, failed ping, idle or open too long, or the store closed).", &m.discards)
	m.reg.Counter(MetricConnectMicros, "Time spent opening the connections that opened (dial to ready), in microseconds.", &m.connectMicros)
	m.reg.Counter(MetricIdlePings, "Idle connections pinged before a checkout (Config.IdlePing).", &m.pings)
	m.reg.Gauge(MetricOpenConnections, "Connections open now, idle or checked out.", &m.open)
	m.reg.CounterVec(MetricStatements, "Statements run, by statement.", m.statements)
	m.reg.CounterVec(MetricStatementErrors, "Statements that failed, by statement.", m.statementErrors)
	m.reg.CounterVec(MetricRows, "Rows returned (IDs; a point check returns one row), by statement.", m.rows)
	return m
}

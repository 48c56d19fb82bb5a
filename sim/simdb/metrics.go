package simdb

import (
	"time"

	"github.com/windtunnel/windtunnel/impl/stats"
)

// Label values of simdb_errors_injected_total{source}.
const (
	SourceRead  = "read"  // ReadErrorProb
	SourceWrite = "write" // WriteErrorProb
	SourceHook  = "hook"  // an error returned by the Hook
)

// metrics are the database's counters. Every one is registered under a
// simdb_ name so a scenario can print them next to the relay's own.
type metrics struct {
	reg             stats.Registry
	statements      *stats.CounterVec // by statement name
	rows            *stats.CounterVec // rows returned, by statement name
	canceled        stats.Counter     // statements whose ctx ended during their latency
	slow            stats.Counter     // statements and writes that drew the slow tail
	injected        *stats.CounterVec // by source
	checkouts       stats.Counter
	checkoutWaits   stats.Counter // checkouts that had to queue
	waitNs          stats.Counter // total queueing time of checkouts
	waitMaxNs       stats.Gauge
	acquireCanceled stats.Counter // Acquire calls whose ctx ended while queued
	queueFull       stats.Counter
	connects        stats.Counter // connections opened or tried (Connections)
	connectErrors   stats.Counter
	pings           stats.Counter // idle connections pinged before a checkout
	connectNs       stats.Counter // time the successful openings took
	inUse           stats.Gauge
	inUseMax        stats.Gauge
	commits         stats.Counter
	writesFailed    stats.Counter // writes that did not commit (error or ctx)
}

func newMetrics(statements []string) *metrics {
	m := &metrics{injected: stats.NewCounterVec("source", SourceRead, SourceWrite, SourceHook)}
	if len(statements) > 0 {
		m.statements = stats.NewCounterVec("statement", statements...)
		m.rows = stats.NewCounterVec("statement", statements...)
		m.reg.CounterVec("simdb_statements_total", "Statements started, by name.", m.statements)
		m.reg.CounterVec("simdb_rows_total", "Rows returned by statements that succeeded, by name.", m.rows)
	}
	m.reg.Counter("simdb_statements_canceled_total", "Statements whose context ended during their latency.", &m.canceled)
	m.reg.Counter("simdb_slow_total", "Statements and writes whose latency came from the slow tail.", &m.slow)
	m.reg.CounterVec("simdb_errors_injected_total", "Injected statement and write failures, by source.", m.injected)
	m.reg.Counter("simdb_checkouts_total", "Connections handed out by Acquire.", &m.checkouts)
	m.reg.Counter("simdb_checkout_waits_total", "Checkouts that queued because every connection was busy.", &m.checkoutWaits)
	m.reg.Counter("simdb_checkout_wait_ns_total", "Virtual time checkouts spent queued, in nanoseconds.", &m.waitNs)
	m.reg.Gauge("simdb_checkout_wait_max_ns", "Longest time one checkout spent queued, in nanoseconds.", &m.waitMaxNs)
	m.reg.Counter("simdb_acquire_canceled_total", "Acquire calls whose context ended while they queued.", &m.acquireCanceled)
	m.reg.Counter("simdb_pool_queue_full_total", "Acquire calls refused because MaxWaiters callers already queued.", &m.queueFull)
	m.reg.Counter("simdb_connects_total", "Connections a checkout opened or tried to open (Config.Connections).", &m.connects)
	m.reg.Counter("simdb_connect_errors_total", "Openings of a connection that failed.", &m.connectErrors)
	m.reg.Counter("simdb_connect_ns_total", "Virtual time the connections that opened took to open, in nanoseconds.", &m.connectNs)
	m.reg.Counter("simdb_idle_pings_total", "Idle connections pinged before a checkout (Config.Connections).", &m.pings)
	m.reg.Gauge("simdb_conns_in_use", "Connections checked out now.", &m.inUse)
	m.reg.Gauge("simdb_conns_in_use_max", "Most connections checked out at once.", &m.inUseMax)
	m.reg.Counter("simdb_commits_total", "Writes committed (entries of the commit log).", &m.commits)
	m.reg.Counter("simdb_writes_failed_total", "Writes that did not commit: injected error or ended context.", &m.writesFailed)
	return m
}

// Stats is a copy of a database's counters.
type Stats struct {
	Statements      int64 // statements started, every name
	Rows            int64 // rows returned, every name
	Canceled        int64 // statements whose ctx ended during their latency
	Slow            int64 // statements and writes in the slow tail
	Injected        int64 // injected failures, every source
	Checkouts       int64
	CheckoutWaits   int64 // checkouts that queued
	WaitTotal       time.Duration
	WaitMax         time.Duration
	AcquireCanceled int64
	QueueFull       int64
	Connects        int64 // openings tried (Config.Connections)
	ConnectErrors   int64
	Pings           int64         // idle connections pinged
	ConnectTime     time.Duration // time the successful openings took, in all
	InUse, InUseMax int64
	Commits         int64
	WritesFailed    int64
}

func (m *metrics) snapshot() Stats {
	st := Stats{
		Canceled:        m.canceled.Value(),
		Slow:            m.slow.Value(),
		Checkouts:       m.checkouts.Value(),
		CheckoutWaits:   m.checkoutWaits.Value(),
		WaitTotal:       time.Duration(m.waitNs.Value()),
		WaitMax:         time.Duration(m.waitMaxNs.Value()),
		AcquireCanceled: m.acquireCanceled.Value(),
		QueueFull:       m.queueFull.Value(),
		Connects:        m.connects.Value(),
		ConnectErrors:   m.connectErrors.Value(),
		Pings:           m.pings.Value(),
		ConnectTime:     time.Duration(m.connectNs.Value()),
		InUse:           m.inUse.Value(),
		InUseMax:        m.inUseMax.Value(),
		Commits:         m.commits.Value(),
		WritesFailed:    m.writesFailed.Value(),
	}
	for _, src := range []string{SourceRead, SourceWrite, SourceHook} {
		st.Injected += m.injected.With(src).Value()
	}
	return st
}

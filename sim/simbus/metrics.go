package simbus

import "github.com/windtunnel/windtunnel/impl/stats"

// metrics are one subscriber's counters, registered under simbus_ names.
type metrics struct {
	reg        stats.Registry
	sent       stats.Counter     // messages published while subscribed
	delivered  stats.Counter     // messages whose handler ran at least once
	calls      stats.Counter     // handler calls, duplicates included
	lost       *stats.CounterVec // by cause
	duplicated stats.Counter     // second deliveries
	reordered  stats.Counter     // first deliveries after a later message's
	disconnect stats.Counter     // reconnect gaps drawn
	queueLen   stats.Gauge
	queueMax   stats.Gauge
}

func newMetrics() *metrics {
	names := make([]string, len(lossCauses))
	for i, c := range lossCauses {
		names[i] = c.String()
	}
	m := &metrics{lost: stats.NewCounterVec("cause", names...)}
	m.reg.Counter("simbus_sent_total", "Messages published while subscribed.", &m.sent)
	m.reg.Counter("simbus_delivered_total", "Messages delivered to the handler at least once.", &m.delivered)
	m.reg.Counter("simbus_handler_calls_total", "Handler calls, duplicates included.", &m.calls)
	m.reg.CounterVec("simbus_lost_total", "Messages that will never be delivered, by cause.", m.lost)
	m.reg.Counter("simbus_duplicated_total", "Messages delivered a second time.", &m.duplicated)
	m.reg.Counter("simbus_reordered_total", "Messages first delivered after a message published later.", &m.reordered)
	m.reg.Counter("simbus_reconnect_gaps_total", "Random disconnections drawn.", &m.disconnect)
	m.reg.Gauge("simbus_queue_len", "Messages in flight or queued for the handler.", &m.queueLen)
	m.reg.Gauge("simbus_queue_len_max", "Most messages in flight or queued at once.", &m.queueMax)
	return m
}

// Stats is a copy of one subscriber's counters. Every published message is
// counted in Sent and, at any moment, in exactly one of Delivered, a Lost
// cause, or Pending; Calls = Delivered + Duplicated.
type Stats struct {
	Sent, Delivered, Calls, Duplicated, Reordered int64
	Pending                                       int64 // in flight or queued
	ReconnectGaps                                 int64
	QueueLen, QueueMax                            int64
	lost                                          [numCauses]int64
}

// Lost returns how many messages were lost for cause c.
func (s Stats) Lost(c Cause) int64 {
	if c < numCauses {
		return s.lost[c]
	}
	return 0
}

// LostTotal returns how many messages were lost, every cause.
func (s Stats) LostTotal() int64 {
	var n int64
	for _, v := range s.lost {
		n += v
	}
	return n
}

func (m *metrics) snapshot() Stats {
	st := Stats{
		Sent: m.sent.Value(), Delivered: m.delivered.Value(), Calls: m.calls.Value(),
		Duplicated: m.duplicated.Value(), Reordered: m.reordered.Value(),
		ReconnectGaps: m.disconnect.Value(), QueueLen: m.queueLen.Value(), QueueMax: m.queueMax.Value(),
	}
	for _, c := range lossCauses {
		st.lost[c] = m.lost.With(c.String()).Value()
	}
	st.Pending = st.Sent - st.Delivered - st.LostTotal()
	return st
}

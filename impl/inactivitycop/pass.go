package inactivitycop

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// Timeout is one fired timeout.
type Timeout struct {
	Conn     *Conn
	Kind     Kind
	Deadline time.Time // the deadline that passed; zero for Evicted
	At       time.Time // the instant of the pass that found it, or of the opening that evicted it
}

// PassResult is what one pass did; the counts are exact (TW-3, TW-8).
type PassResult struct {
	At time.Time
	// Buckets, Visited, Rearmed and Exhausted are the wheel's pass.
	Buckets, Visited, Rearmed int
	Exhausted                 bool
	// Fired is len(Timeouts).
	Fired int
	// Lookups is the per-connection mutex/thread lookups: one per visited
	// connection (the full scan: one per open connection).
	Lookups int
	// Timeouts lists the timeouts fired, in wheel order. From Cop.Pass the
	// slice is reused by the next pass; Handler.Pass returns a copy.
	Timeouts []Timeout
	// Audit is the audit's finding when Config.Audit is on, else nil.
	Audit *Audit
}

// Pass runs one cop pass at now: the wheel visits the connections in
// buckets whose tick has begun, at most Budget of them, fires those whose
// deadline has passed and re-arms the rest. With Config.Audit it then audits
// every open connection. It updates the metrics except the pass times, which
// need a clock (Handler.Pass adds them).
func (p *Cop) Pass(now time.Time) PassResult {
	p.timeouts = p.timeouts[:0]
	wp, err := p.wheel.Expire(now, p.cfg.Budget)
	if err != nil {
		// Unreachable: Budget is validated and expired never calls Pass.
		panic(fmt.Sprintf("inactivitycop: %v", err))
	}
	r := PassResult{
		At:        now,
		Buckets:   wp.Buckets,
		Visited:   wp.Visited,
		Rearmed:   wp.Rearmed,
		Exhausted: wp.Exhausted,
		Fired:     len(p.timeouts),
		Lookups:   wp.Visited, // one mutex/thread lookup per visited connection (TW-3)
		Timeouts:  p.timeouts,
	}
	if p.cfg.Audit { // TW-7: the opt-in audit
		a := p.Audit()
		r.Audit = &a
	}
	p.count(&r)
	return r
}

func (p *Cop) count(r *PassResult) {
	m := p.m
	m.Passes.Inc()
	if r.Visited > 0 { // skip atomics that add nothing: an idle pass stays ~tens of ns
		m.Visited.Add(int64(r.Visited))
		m.Lookups.Add(int64(r.Lookups))
	}
	if r.Fired > 0 {
		m.Fired.Add(int64(r.Fired))
	}
	if r.Exhausted {
		m.BudgetExhausted.Inc()
	}
	if a := r.Audit; a != nil {
		if len(a.Lost) > 0 {
			m.AuditLost.Add(int64(len(a.Lost)))
		}
		if len(a.Late) > 0 {
			m.AuditLate.Add(int64(len(a.Late)))
		}
	}
}

// Audit is the audit's finding over the open connections.
type Audit struct {
	// Checked is the number of open connections audited.
	Checked int
	// Lost: a live deadline the wheel does not hold, so no pass will ever
	// time the connection out (the seed's TS-4131 failure mode).
	Lost []*Conn
	// Late: the wheel holds a deadline later than the real one (TW-1
	// broken), so the timeout would fire late.
	Late []*Conn
}

// Audit checks every open connection against the TW-1 contract (TW-7). It
// costs a full scan; Pass runs it when Config.Audit is on.
func (p *Cop) Audit() Audit {
	a := Audit{Checked: p.n}
	for c := p.oldest; c != nil; c = c.newer {
		switch p.wheel.Check(&c.timer) {
		case timerwheel.Lost:
			a.Lost = append(a.Lost, c)
		case timerwheel.Late:
			a.Late = append(a.Late, c)
		}
	}
	return a
}

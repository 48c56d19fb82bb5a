package main

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/edge/flight"

	"github.com/windtunnel/windtunnel/sim/simdb"
)

// snapshotProbes is how many statements place the server's statement
// start inside the driver's round trip.
const snapshotProbes = 200

// distributions is what the real servers did, for the simulated model's
// parameters: the relays' pool waits and statement times (faults
// included), and where in a statement's round trip the server starts it
// (a READ COMMITTED statement takes its snapshot at its start; simdb
// takes it at the instant the statement is issued).
type distributions struct {
	AcquireWaits, Statements []int64
	MemberReads              []int64 // member half: Acquire start to statement return
	ToStart, FromStart       []int64 // driver send → statement_timestamp(), and it → reply
	StatementErrs            int64
	Resubscriptions          int64
	// Connects and Pings are what the pools spent on their connections
	// before handing them over: openings, and pings of idle ones.
	Connects, Pings int64
	// ConnectTime is the time the Connects took, in all.
	ConnectTime time.Duration
	// AcquireErrs is the Acquire calls that failed (their caller's context
	// ended first, or the connection could not be opened), from the call to
	// the error: not checkouts, so not in AcquireWaits.
	AcquireErrs []int64
}

// fill is the longest member-half read of any relay, from the start of
// its Acquire to its statement's return: OC-7's TTL counts from the
// entry's insertion, after that read, so the tunnel's check adds the
// longest member read its world measured to the bound, and so does this.
func (d distributions) fill() time.Duration {
	var m int64
	for _, v := range d.MemberReads {
		m = max(m, v)
	}
	return time.Duration(m)
}

func (e *env) distributions(ctx context.Context) (distributions, error) {
	var d distributions
	for i := range e.relays {
		st, err := e.stats(ctx, i)
		if err != nil {
			return d, err
		}
		d.AcquireWaits = append(d.AcquireWaits, st.AcquireWaits...)
		d.Statements = append(d.Statements, st.Statements...)
		d.MemberReads = append(d.MemberReads, st.MemberReads...)
		d.StatementErrs += st.StatementErrs
		d.Resubscriptions += st.Subscriptions - 1
		d.Connects += st.Connects
		d.ConnectTime += time.Duration(st.ConnectMicros) * time.Microsecond
		d.Pings += st.Pings
		d.AcquireErrs = append(d.AcquireErrs, st.AcquireErrs...)
	}
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	for range snapshotProbes {
		var st time.Time
		t0 := time.Now().UnixNano()
		if err := e.admin.QueryRow(ctx, `SELECT statement_timestamp()`).Scan(&st); err != nil {
			return d, err
		}
		t1 := time.Now().UnixNano()
		d.ToStart = append(d.ToStart, st.UnixNano()-t0)
		d.FromStart = append(d.FromStart, t1-st.UnixNano())
	}
	return d, nil
}

// quantileRow is a series' quantiles, from its least to its max: enough
// of its shape to fit the simulated model's parameters to.
func quantileRow(ns []int64) string {
	if len(ns) == 0 {
		return "none"
	}
	q := quantiles(ns, 0, 0.1, 0.5, 0.9, 0.95, 0.99, 1)
	return fmt.Sprintf("min %v, p10 %v, p50 %v, p90 %v, p95 %v, p99 %v, max %v (n=%d)", q[0], q[1], q[2], q[3], q[4], q[5], q[6], len(ns))
}

// simulatedModel is simdb's default parameters, as the simulated worlds
// use them unless a swarm seed changes them.
func simulatedModel() string {
	return fmt.Sprintf("statement latency %v (the slow tail of faults off by default; swarm seeds add one), pool %d connections FIFO per pod",
		simdb.DefaultLatency, simdb.DefaultPoolSize)
}

// calibrationReads is how many cold reads of each cache each relay makes
// before any fault, for the fault-free distributions.
const calibrationReads = 100

// calibrate makes cold reads on every relay, one at a time, with no fault
// anywhere, and returns the distributions they produced: the real
// servers' healthy statement times and pool waits, next to simdb's
// DefaultLatency.
func (e *env) calibrate(ctx context.Context, h *history) (distributions, error) {
	k, ch := newID('k'), newID('c')
	c, err := e.writer.CreateChannel(ctx, k, ch, true, true)
	if err != nil {
		return distributions{}, err
	}
	h.addCommit(c)
	for i := range e.relays {
		for range calibrationReads {
			e.ask(ctx, h, i, flight.OpGranted, classNonMember, k, newID('u'), ch)
			e.ask(ctx, h, i, flight.OpMember, classMS, k, newID('u'), ch)
		}
	}
	return e.distributions(ctx)
}

// relayStats is every relay's statistics now.
func (e *env) relayStats(ctx context.Context) ([]flight.Stats, error) {
	var out []flight.Stats
	for i := range e.relays {
		st, err := e.stats(ctx, i)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// since is the pool waits and statements the relays measured between two
// of their statistics: each series grows by appending, up to
// flight.MaxSamples, past which what was appended is unknown.
func since(before, after []flight.Stats) distributions {
	var d distributions
	tail := func(a, b []int64) []int64 {
		if len(b) < len(a) || len(b) >= flight.MaxSamples {
			return nil
		}
		return b[len(a):]
	}
	for i := range min(len(before), len(after)) {
		d.AcquireWaits = append(d.AcquireWaits, tail(before[i].AcquireWaits, after[i].AcquireWaits)...)
		d.Statements = append(d.Statements, tail(before[i].Statements, after[i].Statements)...)
		d.StatementErrs += after[i].StatementErrs - before[i].StatementErrs
		d.Connects += after[i].Connects - before[i].Connects
		d.ConnectTime += time.Duration(after[i].ConnectMicros-before[i].ConnectMicros) * time.Microsecond
		d.Pings += after[i].Pings - before[i].Pings
		d.AcquireErrs = append(d.AcquireErrs, tail(before[i].AcquireErrs, after[i].AcquireErrs)...)
	}
	return d
}

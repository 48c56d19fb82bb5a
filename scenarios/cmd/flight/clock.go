package main

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// clockProbes is how many round trips measure each clock.
const clockProbes = 200

// pgResolution is clock_timestamp()'s resolution: timestamptz holds µs,
// so a server instant may read up to 1 µs early.
const pgResolution = time.Microsecond

// clockReport is the machine's clock uncertainty as the flight measured
// it. Every instant the checkers compare comes from one kernel clock
// (CLOCK_REALTIME) read by different processes: the relays stamp reads, the
// server stamps commits. Each source's offset from the driver is bounded
// by round trips (before ≤ stamp ≤ after must hold); Offset is the largest
// amount by which any stamp fell outside its round trip, Step the largest
// difference between the wall clock's and the monotonic clock's elapsed
// time over the flight (a clock step or slew), Resolution the coarsest
// clock's grain. U = Offset + Step + Resolution is added to every bound.
type clockReport struct {
	Offset     time.Duration
	Step       time.Duration
	Resolution time.Duration
	MinRTT     map[string]time.Duration
	Samples    int
}

func (c clockReport) U() time.Duration { return c.Offset + c.Step + c.Resolution }

func (c clockReport) String() string {
	return fmt.Sprintf("U = %v (offset outside round trips %v + wall/monotonic step %v + resolution %v; %d probes; min round trips %v)",
		c.U(), c.Offset, c.Step, c.Resolution, c.Samples, c.MinRTT)
}

// measureClocks bounds every stamping clock against the driver's.
func (e *env) measureClocks(ctx context.Context) (clockReport, error) {
	rep := clockReport{Resolution: pgResolution, MinRTT: map[string]time.Duration{}}
	note := func(name string, before, stamp, after int64, res time.Duration) {
		rep.Samples++
		out := max(before-stamp-int64(res), stamp-after, 0)
		rep.Offset = max(rep.Offset, time.Duration(out))
		rtt := time.Duration(after - before)
		if m, ok := rep.MinRTT[name]; !ok || rtt < m {
			rep.MinRTT[name] = rtt
		}
	}
	for range clockProbes {
		for _, r := range e.relays {
			before := time.Now().UnixNano()
			resp, err := r.Call(ctx, flight.Request{Op: flight.OpClock})
			after := time.Now().UnixNano()
			if err != nil {
				return rep, err
			}
			note(r.Name, before, resp.Clock, after, 0)
		}
		before, stamp, after, err := e.writer.ServerClock(ctx)
		if err != nil {
			return rep, err
		}
		note("postgres", before, stamp, after, pgResolution)
	}
	return rep, nil
}

// stepWatch measures a clock step or slew over a stretch of the flight:
// the wall clock's elapsed time against the monotonic clock's.
type stepWatch struct{ start time.Time }

func startStepWatch() stepWatch { return stepWatch{start: time.Now()} }

func (s stepWatch) step() time.Duration {
	now := time.Now()
	mono := now.Sub(s.start)
	wall := time.Duration(now.UnixNano() - s.start.UnixNano())
	d := wall - mono
	if d < 0 {
		d = -d
	}
	return d
}

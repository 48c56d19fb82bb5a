package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// simChurnStart is the virtual instant the simulated churn starts: the bus
// cuts are partition windows fixed when the world is built, so the churn
// starts at a known instant, after the calm phase.
const simChurnStart = 10 * time.Minute

// simFlight is what the simulated flight measured: the same distributions
// as the real one's, from sim/simdb's model (Config.Observe).
type simFlight struct {
	Calm, Churn distributions
	Faults      map[string]int // fault kinds applied in the simulated churn
}

// errSimFault is a simulated connection reset in the middle of a read.
var errSimFault = errors.New("flight sim: connection reset by peer")

// simulate flies the flight's workload shape in the simulator, on the
// production wiring of o.Relays pods (scenarios/world/pods), each with its
// own pool of simdb's default size, as each relay holds pgstore's, opened
// and pinged as pgxpool does (simdb.Connections): the
// calm phase (calibrationReads cold reads of each cache per relay, one at
// a time), then the churn with the flight's seeded world, traffic, writes
// and fault schedule (the same draws from the same seed). Database
// latency, a reset mid-read and a starved pool are applied to the pod's
// statements through simdb's Hook, a cut bus as a partition of the pod's
// subscription and delayed delivery as a slowdown of it. The OC-2, 10 s and MS-3 phases are directed races
// the tunnel has its own worlds for; they are not flown here.
func simulate(o Options) (simFlight, error) {
	if o.Relays < 2 || o.Relays > 8 {
		return simFlight{}, fmt.Errorf("flight sim: -relays must be 2 to 8, got %d", o.Relays)
	}
	if o.MaxConns != 0 && o.MaxConns != simdb.DefaultPoolSize {
		return simFlight{}, fmt.Errorf("flight sim: a pods world gives each pod simdb's default pool (%d), not -max-conns %d", simdb.DefaultPoolSize, o.MaxConns)
	}
	if o.Churn < 0 || o.Churn > 10*time.Minute {
		return simFlight{}, fmt.Errorf("flight sim: -churn must be 0 to 10m, got %v", o.Churn)
	}
	p := planSim(o)
	out := simFlight{Faults: map[string]int{}}
	var d distributions
	observe := func(t simdb.Timing) {
		if t.Name == simdb.AcquireStatement && t.Err {
			if len(d.AcquireErrs) < flight.MaxSamples {
				d.AcquireErrs = append(d.AcquireErrs, int64(t.Wait()))
			}
			return
		}
		if t.Name == simdb.AcquireStatement {
			if len(d.AcquireWaits) < flight.MaxSamples {
				d.AcquireWaits = append(d.AcquireWaits, int64(t.Wait()))
			}
			return
		}
		if len(d.Statements) < flight.MaxSamples {
			d.Statements = append(d.Statements, int64(t.Wait()))
			d.ToStart = append(d.ToStart, int64(t.Lag()))
			d.FromStart = append(d.FromStart, int64(t.Done.Sub(t.Snapshot)))
		}
		if t.Err {
			d.StatementErrs++
		}
	}
	podFaults := make([]simbus.Faults, o.Relays)
	for _, f := range p.faults {
		w := simbus.Window{Start: simChurnStart + f.At, End: simChurnStart + f.At + f.For}
		switch f.Kind {
		case "bus-cut":
			podFaults[f.Relay].Partitions = append(podFaults[f.Relay].Partitions, w)
		case "bus-delay": // Toxiproxy's latency toxic on the relay's Redis link
			podFaults[f.Relay].Slowdowns = append(podFaults[f.Relay].Slowdowns, simbus.Slowdown{Window: w, Extra: time.Duration(f.Latency) * time.Millisecond})
		}
	}
	active := make([]*fault, o.Relays)
	// reset holds, per reset fault, the connections it has broken. A
	// reset_peer toxic resets a connection on the first data through it
	// in its window: a pooled connection's statement or ping fails once
	// and breaks it (the pool then opens it again), and every opening
	// fails until the toxic is removed (the real flight's failed Acquire
	// calls, "connection reset by peer" while connecting).
	reset := map[*fault]map[int]bool{}
	jitter := rand.New(rand.NewPCG(o.Seed, 2))
	hook := func(st simdb.Statement) simdb.Fault {
		if st.Write || st.Conn == 0 {
			return simdb.Fault{}
		}
		f := active[(st.Conn-1)/simdb.DefaultPoolSize]
		if f == nil {
			return simdb.Fault{}
		}
		base := pickUniform(jitter, simdb.DefaultLatency.BaseMin, simdb.DefaultLatency.BaseMax)
		ms := time.Millisecond
		switch f.Kind {
		case "db-latency": // a latency toxic: latency ± jitter on the reply
			j := time.Duration(0)
			if f.Jitter > 0 {
				j = time.Duration(jitter.Int64N(int64(2*f.Jitter)*int64(ms))) - time.Duration(f.Jitter)*ms
			}
			return simdb.Fault{Latency: base + max(0, time.Duration(f.Latency)*ms+j), Fixed: true, Required: true}
		case "pool-starved":
			return simdb.Fault{Latency: base + time.Duration(f.Latency)*ms, Fixed: true, Required: true}
		case "db-reset": // reset_peer: the connection is reset after its timeout, once
			if reset[f] == nil {
				reset[f] = map[int]bool{}
			}
			if reset[f][st.Conn] && st.Name != simdb.ConnectStatement {
				return simdb.Fault{Latency: base, Fixed: true, Required: true}
			}
			reset[f][st.Conn] = true
			return simdb.Fault{Err: errSimFault, Breaks: true, Latency: time.Duration(f.Latency) * ms, Fixed: true, Required: true}
		}
		return simdb.Fault{}
	}
	res := sim.Run(sim.Config{Seed: o.Seed}, func(s *sim.Sim) {
		// Each relay's pgxpool opens its connections as they are first
		// needed and pings one idle for longer than pgstore's IdlePing;
		// the server takes 12 to 25 ms to start a connection's backend
		// (docs/flight.md, "The pool's own costs").
		conns := simdb.Connections{Lazy: true, IdlePing: pgstore.DefaultIdlePing, OpenMin: 12 * time.Millisecond, OpenMax: 25 * time.Millisecond}
		cfg := pods.Config{Pods: o.Relays, DB: simdb.Config{Latency: simdb.DefaultLatency, Hook: hook, Observe: observe, Connections: conns},
			PodFaults: podFaults}
		w, err := pods.NewWorld(s, cfg, p.tables)
		if err != nil {
			s.Failf("flight sim: %v", err)
		}
		ctx := context.Background()
		// pgstore.Open pings the server, which opens each relay's first
		// connection before any read; the relays' statistics start after.
		for i := range w.Pods {
			c, err := w.DB.AcquireFrom(ctx, i)
			if err != nil {
				s.Failf("flight sim: opening pod %d's first connection: %v", i, err)
			}
			c.Release()
		}
		d = distributions{}
		for i := range w.Pods {
			for range calibrationReads {
				_, _ = w.Granted(ctx, w.Pods[i], 0, p.calmK, p.user(), p.calmCh)
				_, _ = w.IsMember(ctx, w.Pods[i], 0, p.calmK, p.user(), p.calmCh)
			}
		}
		calm := w.DB.Stats()
		d.Connects, d.Pings, d.ConnectTime = opens(calm), calm.Pings, calm.ConnectTime
		out.Calm, d = d, distributions{}
		if s.Elapsed() >= simChurnStart {
			s.Failf("flight sim: the calm phase ran past the churn's start (%v)", s.Elapsed())
		}
		if o.Churn > 0 {
			_ = s.Sleep(ctx, simChurnStart-s.Elapsed())
			p.churn(s, w, o.Churn, active, out.Faults)
		}
		end := w.DB.Stats()
		d.Connects, d.Pings, d.ConnectTime = opens(end)-opens(calm), end.Pings-calm.Pings, end.ConnectTime-calm.ConnectTime
		out.Churn = d
	})
	if res.Err != nil {
		return out, fmt.Errorf("flight sim: %w", res.Err)
	}
	return out, nil
}

// opens is the connections simdb opened, as pgstore counts its connects:
// successful ones only.
func opens(st simdb.Stats) int64 { return st.Connects - st.ConnectErrors }

// pickUniform is a duration uniform in [lo, hi].
func pickUniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

package pods

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// ChurnOpts selects the deployment one Churn seed flies in.
type ChurnOpts struct {
	Pods int // 0: 3
	// SlowOpenReads makes about a third of the open-set reads take
	// 300–900 ms, so that fills straddle revocations (OC-2, OC-4).
	SlowOpenReads bool
	// SlowMemberReads does the same for member-half and membership reads.
	SlowMemberReads bool
	// Reliable turns the bus faults off (OC-4, OC-6, MS-3 run on one pod
	// with reliable invalidation).
	Reliable bool
	// NoRestarts keeps every pod's caches for the whole run.
	NoRestarts bool
	// Lossy makes sure invalidations are lost (at least 20% per link) on
	// top of the swarm's plan, for claims about what a lost one allows.
	Lossy bool
	Tweak func(*Churn)
}

// FlyChurn builds a world with a swarm-chosen database and bus plan
// (recorded in the run header) and runs the Churn workload on it. errs
// counts the single operations that failed under faults.
func FlyChurn(s *sim.Sim, o ChurnOpts) (w *World, errs int, err error) {
	c := DefaultChurn()
	if o.NoRestarts {
		c.RestartProb = 0
	}
	if o.Tweak != nil {
		o.Tweak(&c)
	}
	horizon := time.Duration(c.AdminWrites) * c.AdminPause / 2
	dbcfg := simdb.Swarm(s.Rand(), simdb.Config{Latency: simdb.DefaultLatency, PoolSize: 8})
	if o.SlowOpenReads || o.SlowMemberReads {
		dbcfg.Hook = func(st simdb.Statement) simdb.Fault {
			slow := (o.SlowOpenReads && st.Name == StmtListedOpenChannels) ||
				(o.SlowMemberReads && (st.Name == StmtMemberChannels || st.Name == StmtActiveMemberships))
			if slow && s.Rand().IntN(3) == 0 {
				return simdb.Fault{Fixed: true, Latency: 300*time.Millisecond + time.Duration(s.Rand().Int64N(int64(600*time.Millisecond)))}
			}
			return simdb.Fault{}
		}
	}
	faults := simbus.Swarm(s.Rand(), horizon)
	if o.Reliable {
		faults = simbus.Reliable()
	}
	if o.Lossy {
		faults.LossProb = max(faults.LossProb, 0.2)
	}
	pods := o.Pods
	if pods == 0 {
		pods = 3
	}
	s.Note("%s", dbcfg.String())
	s.Note("bus %s", faults.String())
	s.Note("churn: %d pods, %d admins x %d writes, %d readers x %d reads, restarts %.0f%%",
		pods, c.Admins, c.AdminWrites, c.Readers, c.Reads, 100*c.RestartProb)
	tables, err := c.Tables()
	if err != nil {
		return nil, 0, err
	}
	w, err = NewWorld(s, Config{Pods: pods, DB: dbcfg, Bus: simbus.Config{Faults: faults}}, tables)
	if err != nil {
		return nil, 0, err
	}
	if err := c.TrackAll(w); err != nil {
		return nil, 0, err
	}
	return w, c.Run(context.Background(), w), nil
}

// MSOpts selects the deployment an MSChurn seed flies in.
type MSOpts struct {
	Pods int // 0: 1
	// Reliable turns every bus fault off (MS-3 runs on one pod with
	// reliable invalidation).
	Reliable bool
	// LossyPod, when ≥ 0, is a pod that loses 90–100% of the invalidations
	// sent to it, on top of the seed's swarm faults: the lost-invalidation
	// case MS-2 and MS-10 bound. Use -1 for none.
	LossyPod int
	Tweak    func(*MSChurn)
}

// SlowLoads makes about half of the membership loads take 300–900 ms, so
// that loads straddle membership changes (MS-2, MS-3): the snapshot instant
// is then well before the load completes.
func SlowLoads(s *sim.Sim) simdb.Hook {
	return func(st simdb.Statement) simdb.Fault {
		if st.Name == StmtActiveMemberships && s.Rand().IntN(2) == 0 {
			return simdb.Fault{Fixed: true, Latency: 300*time.Millisecond + time.Duration(s.Rand().Int64N(int64(600*time.Millisecond)))}
		}
		return simdb.Fault{}
	}
}

// FlyMS builds a world with a swarm-chosen database plan (slow tail,
// transient errors, pool pressure) plus slow membership loads, swarm bus
// faults per pod (or a reliable bus), and runs the MSChurn workload on it.
func FlyMS(s *sim.Sim, o MSOpts) (*World, error) {
	c := DefaultMSChurn()
	if o.Tweak != nil {
		o.Tweak(&c)
	}
	pods := max(o.Pods, 1)
	dbcfg := simdb.Swarm(s.Rand(), simdb.Config{Latency: simdb.DefaultLatency, PoolSize: 8})
	dbcfg.Hook = SlowLoads(s)
	faults := make([]simbus.Faults, pods)
	for i := range faults {
		if o.Reliable {
			faults[i] = simbus.Reliable()
			continue
		}
		faults[i] = simbus.Swarm(s.Rand(), c.Horizon)
		if i == o.LossyPod {
			faults[i].LossProb = 0.9 + 0.1*s.Rand().Float64()
		}
	}
	s.Note("%s", dbcfg.String())
	for i, f := range faults {
		s.Note("bus to pod%d %s", i, f.String())
	}
	s.Note("ms churn: %d pods, %d users x %d channels, %d admins (pause ≤%v, grant %.0f%%), writes on %v, reads on %v, %v",
		pods, len(c.Users), len(c.Channels), c.Admins, c.AdminPause, 100*c.GrantProb, c.WritePods, c.ReadPods, c.Horizon)
	tables, err := c.Tables()
	if err != nil {
		return nil, err
	}
	w, err := NewWorld(s, Config{Pods: pods, DB: dbcfg, PodFaults: faults}, tables)
	if err != nil {
		return nil, err
	}
	if err := c.TrackAll(w); err != nil {
		return nil, err
	}
	if _, err := c.Run(context.Background(), w); err != nil {
		return nil, err
	}
	return w, nil
}

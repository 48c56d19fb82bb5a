package oc

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC4_RacedFillStillBounded checks OC-4 on a random workload: a fill
// that raced a drop is still less than the max age stale, so open-set fills
// need no fence. One pod, reliable invalidation, slow open-set reads
// straddling revocations: only fills that raced a drop can be stale.
func TestOC4_RacedFillStillBounded(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-4", Bound: "raced fill max age", Options: simtest.Options{Seeds: 20}, Sampled: true,
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, _, err := pods.FlyChurn(s, pods.ChurnOpts{Pods: 1, Reliable: true, SlowOpenReads: true})
			if err != nil {
				return claims.Sample{}, err
			}
			return nonMemberGrants(w, b)
		},
		Measured: staleMeasured("grant-staleness of non-member reads on one pod with reliable invalidation"),
		Note:     "random churn on one pod, every invalidation applied at once; only fills that raced a drop can be stale",
	})
}

// TestOC4_RaceToTheBound checks OC-4 where it is hardest: on one pod with
// reliable invalidation, each revocation commits right after a cold
// open-set read took its snapshot and is invalidated locally while the read
// is in flight. The read then inserts what it read (no fence), and new
// readers probe from inside the window to past its end. The worst grant is
// just under the bound, and none at or past it.
func TestOC4_RaceToTheBound(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-4", Bound: "raced fill max age", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, k, err := openRaceWorld(s, true, len(revocations))
			if err != nil {
				return claims.Sample{}, err
			}
			if _, err := raceOpen(s, w, k, b.Duration(), shuffled(s, revocations)); err != nil {
				return claims.Sample{}, err
			}
			return nonMemberGrants(w, b)
		},
		Measured: staleMeasured("grant-staleness of non-member reads whose fill raced the revocation's drop"),
		Note:     "one pod, reliable invalidation: the revocation commits at the open-set read's snapshot instant and its drop lands during the read",
	})
}

// TestOC4_ProofRacedFill proves OC-4 on the smallest configuration with two
// rounds of the race. One pod with reliable invalidation runs a cold lookup
// whose open-set read takes 500 ms. An admin makes the channel private and
// invalidates the pod at the same instant (the schedule decides whether the
// read's snapshot sees the change). A lookup comes 100 ms later, after the
// invalidation and while the first read is still in flight. That is the
// second round: it must start a read of its own, not join the one begun
// before the drop. Readers ask at the window's boundary, 1 ns before and
// exactly at the bound (later reads take twice the bound, so the boundary
// readers meet the cold read's entry). In every schedule with at most 2
// preemptions every grant is less than the bound stale and the lookup
// after the invalidation is denied.
func TestOC4_ProofRacedFill(t *testing.T) {
	b := claims.Get("OC-4", "raced fill max age")
	claims.Prove(t, claims.ProofCheck{
		Claim:     "OC-4",
		Config:    "one pod; a cold lookup with a 500 ms open-set read racing a revocation and its invalidation; a lookup after the invalidation while the read is in flight; readers at the bound minus 1 ns and at the bound",
		Reduction: sim.ReductionDPOR,
		Body:      func(s *sim.Sim) { racedFillProof(s, b) },
		Probes: []claims.Probe{
			{Name: "oc/revocation-after-open-snapshot", What: "the revocation committed after the cold read's snapshot (its fill is stale)", Min: 1},
			{Name: "oc/invalidation-during-open-read", What: "the invalidation was applied while the cold open-set read was in flight", Min: 1},
		},
	})
}

func racedFillProof(s *sim.Sim, b claims.Bound) {
	ctx := context.Background()
	k, o := authz.NewID('k', 1), authz.NewID('o', 1)
	tables := authztest.NewTables()
	_ = tables.AddChannel(authztest.Channel{ID: o, Community: k, Open: true, Listed: true})
	var coldSnapshot time.Time
	store := proofStore(s, tables, func(st simdb.Statement) simdb.Fault {
		if st.Name == pods.StmtListedOpenChannels {
			if coldSnapshot.IsZero() {
				coldSnapshot = st.At
				return simdb.Fault{Fixed: true, Latency: 500 * time.Millisecond}
			}
			// Later reads are slow, so that at the boundary the cold
			// read's entry is still the one a lookup finds.
			return simdb.Fault{Fixed: true, Latency: 2 * b.Duration()}
		}
		return simdb.Fault{}
	})
	r, err := relay.New(s, store, nil, relay.Config{OC: accesschannels.Config{}})
	if err != nil {
		s.Failf("setup: %v", err)
	}
	truth := checks.Truth{}
	var reads []checks.Read
	readers := []authz.ID{authz.NewID('r', 1), authz.NewID('r', 2), authz.NewID('r', 3), authz.NewID('r', 4)}
	for _, rd := range readers {
		_ = truth.Declare(pods.Short(rd), true)
	}
	lookup := func(reader authz.ID) bool {
		invoke := checks.At(s.Elapsed())
		ids, err := r.OC.Accessible(ctx, k, reader)
		if err != nil {
			s.Failf("OC-4: lookup failed without faults: %v", err)
		}
		granted := slices.Contains(ids, o)
		reads = append(reads, checks.Read{ID: len(reads), Key: pods.Short(reader), Invoke: int64(invoke), Return: int64(s.Elapsed()), Granted: granted})
		return granted
	}
	var coldStart, coldEnd, invalidatedAt time.Duration = -1, -1, -1
	invalidated := s.NewEvent("invalidated")
	wg := s.NewWaitGroup("tasks")
	wg.Add(4)
	s.Go("cold", func() {
		defer wg.Done()
		coldStart = s.Elapsed()
		lookup(readers[0])
		coldEnd = s.Elapsed()
	})
	s.Go("admin", func() {
		defer wg.Done()
		at, err := store.DB.Write(ctx, "make private", func(t *authztest.Tables) {
			_ = t.UpdateChannel(o, func(c *authztest.Channel) { c.Open = false })
		})
		if err != nil {
			s.Failf("write: %v", err)
		}
		for _, rd := range readers {
			_ = truth.Commit(pods.Short(rd), int64(at.Sub(sim.Epoch)), false)
		}
		if !coldSnapshot.IsZero() && !at.Before(coldSnapshot) {
			s.Probe("oc/revocation-after-open-snapshot")
		}
		if err := r.Changed(ctx, relay.VisibilityChanged(k, o)); err != nil {
			s.Failf("invalidate: %v", err)
		}
		invalidatedAt = s.Elapsed()
		if coldStart >= 0 && coldEnd < 0 {
			s.Probe("oc/invalidation-during-open-read")
		}
		invalidated.Set()
	})
	s.Go("after-invalidation", func() {
		defer wg.Done()
		_ = invalidated.Wait(ctx)
		_ = s.Sleep(ctx, 100*time.Millisecond)
		if coldEnd < 0 && lookup(readers[1]) {
			s.Failf("OC-5: a lookup at +%v, after the community-wide invalidation at +%v, was granted the revoked channel: it was served by the open-set read in flight since +%v instead of a read of its own",
				s.Elapsed(), invalidatedAt, coldStart)
		}
	})
	s.Go("at-the-boundary", func() {
		defer wg.Done()
		_ = s.Sleep(ctx, b.Duration()-time.Nanosecond)
		lookup(readers[2])
		_ = s.Sleep(ctx, b.Duration()-s.Elapsed())
		lookup(readers[3])
	})
	_ = wg.Wait(ctx)
	rep, err := checks.Staleness(reads, truth)
	if err != nil {
		s.Failf("OC-4: %v", err)
	}
	if rep.Grant.Phantoms > 0 || !b.Holds(rep.Grant.MaxStaleness.Seconds()) {
		s.Failf("OC-4: grant-staleness %v breaks %s: %s", rep.Grant.MaxStaleness, b, rep.Grant)
	}
}

// proofStore is a relay database with no latency model but what the hook
// says (statements still yield before their snapshot), for proofs: every
// interleaving of the statements with the other tasks is a schedule, not a
// random draw.
func proofStore(s *sim.Sim, t authztest.Tables, hook simdb.Hook) pods.Store {
	db, err := simdb.New(s, simdb.Config{PoolSize: 4, Statements: pods.Statements, Hook: hook}, t)
	if err != nil {
		s.Failf("proof setup: %v", err)
	}
	return pods.Store{DB: db, S: s, Reads: &pods.ReadTimes{Max: map[string]int64{}}}
}

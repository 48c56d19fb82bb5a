package ms

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/stale"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// staleness is a seed's sample over its membership answers: grant- and/or
// deny-staleness from the exact checker (cross-checked with porcupine at
// the bound minus 1 ns: the window is half-open), the worst of the classes
// asked for.
func staleness(w *pods.World, b claims.Bound, grants, denials bool) (claims.Sample, error) {
	var out claims.Sample
	var errs []string
	within := b.Duration() - time.Nanosecond
	var grant, deny pods.Staleness
	var err error
	switch {
	case grants && denials: // one exact check and one cross-check for both
		grant, deny, err = w.StalenessBoth(within, pods.Membership)
	case grants:
		grant, err = w.Staleness(true, within, pods.Membership)
	case denials:
		deny, err = w.Staleness(false, within, pods.Membership)
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w", b.Claim, err)
	}
	for _, class := range []struct {
		on   bool
		st   pods.Staleness
		name string
	}{{grants, grant, "grant"}, {denials, deny, "deny"}} {
		if !class.on {
			continue
		}
		smp := stale.Sample(class.st.ClassReport, w.History.Describe)
		out.Of += smp.Of
		out.Wrong += smp.Wrong
		out.Values = append(out.Values, smp.Values...)
		if smp.Seen && (!out.Seen || smp.Worst > out.Worst) {
			out.Worst, out.Seen, out.Witness = smp.Worst, true, class.name+": "+smp.Witness
		}
		if smp.Seen && !b.Holds(smp.Worst) {
			errs = append(errs, fmt.Sprintf("%s-staleness %s breaks %s: %s", class.name, b.Format(smp.Worst), b, smp.Witness))
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s: %s", b.Claim, strings.Join(errs, "; "))
	}
	return out, nil
}

// TestMS2_RaceToTheBound checks MS-2 where it is hardest. A membership is
// removed (and another granted) right after a cold load took its snapshot
// on a pod that never hears the invalidation; half the seeds load after
// waiting in the pool. The same user then checks from inside the freshness
// window to past its end. The worst grant and the worst denial are just
// under the bound, and none at or past it. A longer freshness, expiry
// counted from the load's completion, or a comparison that serves at
// exactly the expiry would answer a probe past it.
//
// It is declared before TestMS2_FreshnessFromCheckout so that go test runs
// it first. The audit stops a mutant's run at its first failure, so a
// mutant of the bound is caught by this race's few operations before the
// random workload's seeds run at all.
func TestMS2_RaceToTheBound(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-2", Bound: "freshness", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			poolWait := s.Rand().IntN(2) == 0
			w, err := raceWorld(s, poolWait)
			if err != nil {
				return claims.Sample{}, err
			}
			if err := raceMembership(s, w, b, user(1), pods.RemoveMember, poolWait); err != nil {
				return claims.Sample{}, err
			}
			if err := raceMembership(s, w, b, user(3), pods.GrantMember, false); err != nil {
				return claims.Sample{}, err
			}
			return staleness(w, b, true, true)
		},
		Measured: measuredStaleness("grant- and deny-staleness of a user's checks racing its membership change"),
		Note:     "two pods, the reading pod loses every invalidation; the change commits at the load's snapshot instant (on half the seeds after a pool wait); probes at pods.WindowOffsets of the bound",
	})
}

// TestMS2_FreshnessFromCheckout checks MS-2 on a random workload, with lost
// invalidations, slow membership loads and pool waits. A membership check
// is answered from a snapshot less than the freshness bound old, counted
// from the connection checkout. Both grant- and deny-staleness stay below
// it. Three pods; one loses 90–100% of its invalidations on top of the
// seed's swarm bus faults, so only expiry bounds its answers. It samples
// the window; TestMS2_RaceToTheBound drives it to its end.
func TestMS2_FreshnessFromCheckout(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-2", Bound: "freshness", Options: simtest.Options{Seeds: 8}, Sampled: true,
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, err := pods.FlyMS(s, pods.MSOpts{Pods: 3, LossyPod: 2, Tweak: func(c *pods.MSChurn) {
				c.WritePods = []int{0, 1} // a write applies locally on its pod: pod2 learns only by the bus
			}})
			if err != nil {
				return claims.Sample{}, err
			}
			return staleness(w, b, true, true)
		},
		Measured: measuredStaleness("grant- and deny-staleness of membership checks"),
		Note:     "3 pods, pod2 loses 90–100% of invalidations plus swarm bus faults; half the loads take 300–900 ms; swarm DB plan (slow tail, errors, pool of 1–4 on half the seeds)",
	})
}

// raceWorld is the deployment of the membership races: two pods, the
// reading pod never hears the writer's invalidations; users 1 and 2 are
// members of channel 1, user 3 and 4 are not.
func raceWorld(s *sim.Sim, poolWait bool) (*pods.World, error) {
	tables := authztest.NewTables()
	if err := tables.AddChannel(authztest.Channel{ID: channel(1), Community: community}); err != nil {
		return nil, err
	}
	for _, u := range []int{1, 2} {
		if err := tables.SetMember(user(u), channel(1), true); err != nil {
			return nil, err
		}
	}
	pool := 8
	if poolWait {
		pool = 1
	}
	w, err := pods.NewWorld(s, pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency, PoolSize: pool},
		PodFaults: []simbus.Faults{simbus.Reliable(), {LossProb: 1}}}, tables)
	if err != nil {
		return nil, err
	}
	for u := 1; u <= 4; u++ {
		if err := w.Track(pods.Key{Family: pods.MS, Community: community, Subject: user(u), Channel: channel(1)}, pods.Membership); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// raceMembership races one membership change against a cold load of the
// user's snapshot on the reading pod. The load checks out its connection
// and takes its snapshot at t0, and the change commits at t0 right after
// it. The load returns after a seeded latency. The same user's checks then
// probe the pod from inside the freshness window to past its end. With
// poolWait, the pool has one connection and another user's slow check
// holds it when the load starts, so the load waits in the pool before it
// checks out (the window counts from the checkout, not the request).
func raceMembership(s *sim.Sim, w *pods.World, b claims.Bound, u authz.ID, change pods.Change, poolWait bool) error {
	ctx := context.Background()
	writer, reader := w.Pods[0], w.Pods[1]
	if poolWait {
		hold, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
			if st.Name == pods.StmtIsActiveMember {
				return simdb.Fault{Fixed: true, Latency: 200 * time.Millisecond}, true
			}
			return simdb.Fault{}, false
		})
		if err != nil {
			return err
		}
		// A point check (its own connection) holds the only connection for
		// 200 ms; the race's load queues behind it.
		started := s.NewEvent("pool-holder")
		s.Go("pool-holder", func() {
			c, err := w.Store.Acquire(ctx)
			started.Set()
			if err == nil {
				_, _ = c.IsActiveMember(ctx, community, user(9), channel(1))
				c.Release()
			}
		})
		_ = started.Wait(ctx)
		hold()
	}
	latency := 50*time.Millisecond + time.Duration(s.Rand().Int64N(int64(900*time.Millisecond)))
	_, err := w.Race(ctx, pods.Race{
		Statement: pods.StmtActiveMemberships, ReadLatency: latency,
		Change: change, Community: community, User: u, Channel: channel(1), WritePod: writer,
		Prime: func(ctx context.Context) error {
			_, err := w.IsMember(ctx, reader, 1, community, u, channel(1))
			return err
		},
		Offsets: pods.WindowOffsets(b.Duration(), 0),
		Probe: func(ctx context.Context, i int) error {
			_, err := w.IsMember(ctx, reader, 2+i, community, u, channel(1))
			return err
		},
	})
	if err != nil {
		return err
	}
	// Past the window, for the next race.
	return s.Sleep(ctx, b.Duration()/5)
}

// TestMS10_RaceToTheBound checks MS-10 where it is hardest. A membership
// is granted right after a cold load on another pod took its snapshot, and
// that pod never hears of it. The new member is denied there until just
// under the freshness bound, and never at or after it. It is declared
// first, like TestMS2_RaceToTheBound, so that a mutant of the bound is
// caught by this race before the random workload runs.
func TestMS10_RaceToTheBound(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-10", Bound: "freshness", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, err := raceWorld(s, false)
			if err != nil {
				return claims.Sample{}, err
			}
			if err := raceMembership(s, w, b, user(3), pods.GrantMember, false); err != nil {
				return claims.Sample{}, err
			}
			if err := raceMembership(s, w, b, user(4), pods.GrantMember, true); err != nil {
				return claims.Sample{}, err
			}
			return staleness(w, b, false, true)
		},
		Measured: measuredStaleness("deny-staleness of a new member's checks on a pod that lost the grant's invalidation"),
		Note:     "two pods, the reading pod loses every invalidation; the grant commits at the load's snapshot instant",
	})
}

// TestMS10_NewGrantMissingAtMost10s checks MS-10 on a random workload: a
// newly granted membership can be missing on another relay until the
// invalidation arrives or the freshness bound passes, and no longer.
// Admins write through pod 0 only; clients check on pods 1 and 2, where pod
// 1 loses most invalidations, so a false denial lasts until the snapshot
// expires: deny-staleness below the bound.
func TestMS10_NewGrantMissingAtMost10s(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-10", Bound: "freshness", Options: simtest.Options{Seeds: 6}, Sampled: true,
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, err := pods.FlyMS(s, pods.MSOpts{Pods: 3, LossyPod: 1, Tweak: func(c *pods.MSChurn) {
				c.WritePods, c.ReadPods = []int{0}, []int{1, 2}
				c.GrantProb = 0.6
			}})
			if err != nil {
				return claims.Sample{}, err
			}
			return staleness(w, b, false, true)
		},
		Measured: measuredStaleness("deny-staleness of membership checks on the pods that did not write"),
		Note:     "writes on pod0 only, checks on pod1 (loses 90–100% of invalidations) and pod2",
	})
}

func measuredStaleness(what string) func(o claims.Outcome) string {
	return func(o claims.Outcome) string {
		return fmt.Sprintf("max %s %s over %d reads", what, o.WorstText(), o.Of)
	}
}

package ms

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// linTimeout bounds porcupine on one seed's history. Histories here are
// partitioned per key and a few hundred operations each, checked in well
// under a second; hitting the limit is reported as a failure, never a pass.
const linTimeout = 20 * time.Second

// fenceSeed is one seed of MS-3.
type fenceSeed struct {
	smp claims.Sample
	lin checks.LinResult
}

// TestMS3_FenceLinearizable checks MS-3: an old load can finish its own
// request but cannot repopulate an invalidated entry. On ONE pod with
// reliable invalidation (every write invalidates locally before it
// returns), the membership checks and the writes of their keys must be
// linearizable as boolean registers (porcupine).
//
// About half of the loads take 300–900 ms and admins write about twice a
// second, so loads straddle invalidations of their own user. Clients
// re-check every channel of their user every ≤300 ms. So a snapshot that an
// unfenced load published after the invalidation is read at once, and a
// second load of the same user often starts while the first is still in
// flight after the invalidation (the probes require both).
//
// The fence must hold for the community-wide invalidations too, not only
// for the per-user one. A community admin announces accessible_all every
// ≤3 s (every user of the community reloads at once) and, while those
// loads run, deletes one of three extra channels (each a third of its
// users' memberships) or toggles a channel's visibility. A load that read
// before a deletion holds a list granting the deleted channel; if the
// deletion's drop spared that loading entry, the load would publish it and
// the next check would grant a channel deleted before it began. The
// deletions are writes of the history like the membership changes, so the
// same linearizability judgement covers them; the probe requires
// community-wide drops landing during loads of that community.
func TestMS3_FenceLinearizable(t *testing.T) {
	claims.Run(t, claims.Check[fenceSeed]{
		Claim: "MS-3", Options: simtest.Options{Seeds: 8},
		Fly: func(s *sim.Sim, _ claims.Bound) (fenceSeed, error) {
			var f fenceSeed
			w, err := pods.FlyMS(s, pods.MSOpts{Pods: 1, Reliable: true, LossyPod: -1, Tweak: communityWide})
			if err != nil {
				return f, err
			}
			ops := w.History.LinOps(pods.Membership)
			f.smp.Of = int64(len(ops))
			f.lin = checks.Linearizable(ops, w.Tracker.Initial(), linTimeout)
			switch {
			case f.lin.Err != nil:
				return f, fmt.Errorf("MS-3: the history was rejected: %v", f.lin.Err)
			case f.lin.Verdict == porcupine.Ok:
				return f, nil
			case f.lin.Verdict == porcupine.Unknown:
				f.smp.Wrongly(func() string {
					return fmt.Sprintf("porcupine gave no verdict within %v on %d operations", linTimeout, len(ops))
				})
				return f, fmt.Errorf("MS-3: %s", f.smp.Witness)
			}
			f.smp.Wrongly(func() string {
				return fmt.Sprintf("not linearizable on keys %s (%s)", strings.Join(f.lin.Keys, ", "), f.lin.String())
			})
			return f, fmt.Errorf("MS-3: the membership checks on one pod with reliable invalidation are %s", f.smp.Witness)
		},
		Sample: func(f fenceSeed) claims.Sample { return f.smp },
		More: claims.Hooks[fenceSeed]{
			Artifact: func(dir string, f fenceSeed) string {
				if f.lin.Verdict != porcupine.Illegal {
					return ""
				}
				path, _ := f.lin.WriteVisualization(dir)
				return path
			},
		},
		Probes: []claims.Probe{
			{Name: pods.ProbeDropDuringLoad, What: "a membership invalidation applied while a load of the same user was in flight", Min: 20},
			{Name: pods.ProbeSecondLoadAfterDrop, What: "a second load of the same user began while the first was still in flight after the invalidation", Min: 5},
			{Name: pods.ProbeCommunityDropDuringLoad, What: "a community-wide invalidation (channel_deleted, accessible_all) arrived while a load of that community was in flight", Min: 100},
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d seeds not linearizable (%d operations checked)", o.Wrong, o.Seeds, o.Of)
		},
		Note: "one pod, reliable bus, half the loads 300–900 ms, swarm DB plan, membership changes plus channel deletions, accessible_all and visibility changes; porcupine over boolean registers per (user, channel)",
	})
}

// communityWide adds MS-3's community-wide invalidations to the churn: three
// more channels, each deleted in its turn (a third of the horizon apart),
// and a community admin announcing accessible_all every ≤3 s, each followed
// within 600 ms (while the reloads it caused run) by a deletion or a
// visibility change.
func communityWide(c *pods.MSChurn) {
	n := len(c.Channels)
	for i := range 3 {
		c.Channels = append(c.Channels, authz.NewID('p', uint64(n+i+1)))
	}
	c.Deletions = 3
	c.CommunityPause = 3 * time.Second
}

// TestMS3_ProofFence proves MS-3 on the smallest configuration with two
// rounds of the race. One pod runs a cold check whose load takes 500 ms. An
// admin removes the membership and invalidates while that load is in
// flight. A second check comes after the invalidation; its load (600 ms)
// runs while the first is still in flight and ends after it. A last check
// comes after both loads ended.
// In every schedule with at most 2 preemptions the operations are
// linearizable (porcupine): the old load may answer its own request but
// never publishes over the second load's entry, and the second load's
// answer is the one cached. A fence that accepts any loading entry instead
// of its own lets the first load publish its stale list over the second's
// loading entry, and the last check reads it.
func TestMS3_ProofFence(t *testing.T) {
	claims.Prove(t, claims.ProofCheck{
		Claim:     "MS-3",
		Config:    "one pod; a cold check (500 ms load); a removal and its invalidation during that load; a second check whose load (600 ms) starts after the invalidation and ends after the first; a check after both",
		Reduction: sim.ReductionDPOR,
		Body:      func(s *sim.Sim) { fenceProof(s, false) },
		Probes: []claims.Probe{
			{Name: "ms/second-load-during-first", What: "the second load began while the first was still in flight after the invalidation", Min: 1},
		},
	})
}

// TestMS3_ProofCommunityWideFence proves MS-3 on the same configuration
// with a community-wide invalidation in place of the membership removal:
// the admin deletes the channel, and its channel_deleted message drops the
// community's entries while the first load is in flight. A drop that
// spared loading entries would let that load, which read before the
// deletion, publish a list granting the deleted channel, and the second
// check would be granted a channel deleted before it began.
func TestMS3_ProofCommunityWideFence(t *testing.T) {
	claims.Prove(t, claims.ProofCheck{
		Claim:     "MS-3",
		Config:    "one pod; a cold check (500 ms load); the channel deleted and its channel_deleted invalidation during that load; a second check whose load (600 ms) starts after the invalidation and ends after the first; a check after both",
		Reduction: sim.ReductionDPOR,
		Body:      func(s *sim.Sim) { fenceProof(s, true) },
		Probes: []claims.Probe{
			{Name: "ms/second-load-during-first", What: "the second load began while the first was still in flight after the invalidation", Min: 1},
		},
	})
}

// fenceProof is one run of MS-3's proof configuration. The admin's change
// revokes the grant either by removing the membership (a per-user
// invalidation) or, with deleteChannel, by deleting the channel (a
// community-wide one).
func fenceProof(s *sim.Sim, deleteChannel bool) {
	ctx := context.Background()
	k, u, ch := authz.NewID('k', 1), authz.NewID('u', 1), authz.NewID('c', 1)
	tables := authztest.NewTables()
	_ = tables.AddChannel(authztest.Channel{ID: ch, Community: k})
	_ = tables.SetMember(u, ch, true)
	loads := 0
	db, err := simdb.New(s, simdb.Config{PoolSize: 4, Statements: pods.Statements, Hook: func(st simdb.Statement) simdb.Fault {
		if st.Name == pods.StmtActiveMemberships {
			loads++
			if loads == 1 {
				return simdb.Fault{Fixed: true, Latency: 500 * time.Millisecond}
			}
			return simdb.Fault{Fixed: true, Latency: 600 * time.Millisecond}
		}
		return simdb.Fault{}
	}}, tables)
	if err != nil {
		s.Failf("proof setup: %v", err)
	}
	store := pods.Store{DB: db, S: s, Reads: &pods.ReadTimes{Max: map[string]int64{}}}
	r, err := relay.New(s, store, nil, relay.Config{MS: membership.Config{}})
	if err != nil {
		s.Failf("setup: %v", err)
	}
	// Virtual time moves only through the hook's latencies, so operations
	// are ordered by a logical clock: one task runs at a time, so a counter
	// bumped at every invocation and return is the real-time order.
	var ops []checks.LinOp
	var clock int64
	tick := func() int64 { clock++; return clock }
	var firstDone bool
	read := func(client int) {
		invoke := tick()
		ok, err := r.MS.IsMember(ctx, k, u, ch)
		if err != nil {
			s.Failf("MS-3: check failed without faults: %v", err)
		}
		ops = append(ops, checks.LinOp{Key: "u1/c1", Value: ok, Call: invoke, Return: tick(), Client: client})
	}
	invalidated := s.NewEvent("invalidated")
	secondDone := s.NewEvent("second-done")
	wg := s.NewWaitGroup("tasks")
	wg.Add(4)
	s.Go("cold-check", func() { defer wg.Done(); read(1); firstDone = true })
	s.Go("admin", func() {
		defer wg.Done()
		_ = s.Sleep(ctx, 100*time.Millisecond)
		invoke := tick()
		change, msg := func(t *authztest.Tables) { _ = t.SetMember(u, ch, false) }, relay.MembershipChanged(k, u, ch)
		if deleteChannel {
			change = func(t *authztest.Tables) { _ = t.UpdateChannel(ch, func(c *authztest.Channel) { c.Deleted = true }) }
			msg = relay.ChannelDeleted(k, ch)
		}
		if _, err := db.Write(ctx, string(msg.Kind), change); err != nil {
			s.Failf("write: %v", err)
		}
		_ = r.Changed(ctx, msg)
		ops = append(ops, checks.LinOp{Key: "u1/c1", Write: true, Value: false, Call: invoke, Return: tick(), Client: 2})
		invalidated.Set()
	})
	s.Go("second-check", func() {
		defer wg.Done()
		defer secondDone.Set()
		_ = invalidated.Wait(ctx)
		if loads == 1 && !firstDone {
			s.Probe("ms/second-load-during-first")
		}
		read(3)
	})
	s.Go("last-check", func() {
		defer wg.Done()
		_ = secondDone.Wait(ctx)
		_ = s.Sleep(ctx, time.Second) // after both loads ended
		read(4)
	})
	_ = wg.Wait(ctx)
	if res := checks.Linearizable(ops, map[string]bool{"u1/c1": true}, 0); res.Verdict != porcupine.Ok {
		s.Failf("MS-3: the checks are not linearizable (%s): %+v", res.Verdict, ops)
	}
}

package oc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC5_ScopedInvalidation checks OC-5: a community-wide
// accessible-channel, visibility or channel-deleted invalidation drops both
// halves; a membership invalidation drops only that reader's member half.
// After an invalidation is applied locally, the next lookup re-reads from
// the database exactly the halves it dropped, counted per statement. Seeds
// vary the reader, the message and the order. Every fourth step the
// invalidation lands while an open-set read of the community is in flight:
// a lookup after a community-wide drop must then start a read of its own,
// not join the one that began before the drop.
func TestOC5_ScopedInvalidation(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-5", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			ctx := context.Background()
			c := pods.DefaultChurn()
			tables, err := c.Tables()
			if err != nil {
				return smp, err
			}
			w, err := pods.NewWorld(s, pods.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency}}, tables)
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			readers := append(append([]authz.ID{}, c.NonMembers...), c.Members...)
			count := func() (int64, int64) {
				return w.DB.StatementsOf(pods.StmtMemberChannels), w.DB.StatementsOf(pods.StmtListedOpenChannels)
			}
			for step := range 40 {
				r := readers[s.Rand().IntN(len(readers))]
				other := readers[s.Rand().IntN(len(readers))]
				ch := c.OpenChannels[s.Rand().IntN(len(c.OpenChannels))]
				type inv struct {
					msg          authz.Message
					member, open bool // which halves of r must be re-read
					name         string
				}
				invs := []inv{
					{relay.MembershipChanged(c.Community, r, ch), true, false, "membership of the reader"},
					{relay.AccessibleChanged(c.Community), true, true, "accessible_all of the community"},
					{relay.ChannelDeleted(c.Community, ch), true, true, "channel_deleted in the community"},
					{relay.VisibilityChanged(c.Community, ch), true, true, "visibility in the community"},
					{relay.AccessibleChanged(c.OtherCommunity), false, false, "accessible_all of another community"},
				}
				if other != r {
					invs = append(invs, inv{relay.MembershipChanged(c.Community, other, ch), false, false, "membership of another reader"})
				}
				x := invs[s.Rand().IntN(len(invs))]
				inFlight := step%4 == 3
				if inFlight {
					if err := dropDuringRead(s, w, pod, c.Community, r, x.msg, x.open, &smp); err != nil {
						return smp, err
					}
					continue
				}
				// Warm both halves; the second lookup must be all hits.
				if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
					return smp, err
				}
				m0, o0 := count()
				if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
					return smp, err
				}
				if m1, o1 := count(); m1 != m0 || o1 != o0 {
					return smp, fmt.Errorf("setup: a warm lookup re-read the database (%d member, %d open)", m1-m0, o1-o0)
				}
				pod.Relay.Invalidate(x.msg)
				m1, o1 := count()
				if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
					return smp, err
				}
				m2, o2 := count()
				smp.Of++
				if (m2-m1 == 1) != x.member || (o2-o1 == 1) != x.open || m2-m1 > 1 || o2-o1 > 1 {
					smp.Wrongly(func() string {
						return fmt.Sprintf("after a %s invalidation, reader %s re-read %d member and %d open sets; expected member=%v open=%v",
							x.name, pods.Short(r), m2-m1, o2-o1, x.member, x.open)
					})
					return smp, fmt.Errorf("OC-5: %s", smp.Witness)
				}
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d invalidations re-read other halves than they drop (a quarter of them during an open-set read in flight)", o.Wrong, o.Of)
		},
		Probes: []claims.Probe{
			{Name: "oc/drop-during-open-read", What: "a community-wide invalidation applied while an open-set read of the community was in flight, then a lookup", Min: 10},
		},
	})
}

// dropDuringRead applies msg while a slow open-set read of community is in
// flight on pod, then looks up again. After a community-wide drop (open:
// the message drops the open half) the lookup must run an open-set read of
// its own; after any other message it must join or reuse, never read twice.
func dropDuringRead(s *sim.Sim, w *pods.World, pod *pods.Pod, community, reader authz.ID, msg authz.Message, open bool, smp *claims.Sample) error {
	ctx := context.Background()
	pod.Relay.Invalidate(relay.AccessibleChanged(community)) // start from a cold community
	// The first open-set read is slow and member reads are instant, so the
	// lookup after the drop reaches the open half while that read is still
	// in flight.
	slow := true
	restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
		switch {
		case st.Name == pods.StmtListedOpenChannels && slow:
			slow = false
			return simdb.Fault{Fixed: true, Latency: 500 * time.Millisecond}, true
		case st.Name == pods.StmtMemberChannels:
			return simdb.Fault{Fixed: true}, true
		}
		return simdb.Fault{}, false
	})
	if err != nil {
		return err
	}
	defer restore()
	before := w.DB.StatementsOf(pods.StmtListedOpenChannels)
	first := s.NewEvent("first-lookup")
	var firstErr error
	s.Go("slow-lookup", func() {
		defer first.Set()
		_, firstErr = pod.OC.Accessible(ctx, community, reader)
	})
	// Wait until the first lookup's open-set read has started.
	for polls := 0; w.DB.StatementsOf(pods.StmtListedOpenChannels) == before; polls++ {
		if polls > 10_000 || first.IsSet() {
			return fmt.Errorf("setup: the first lookup never started its open-set read (err %v)", firstErr)
		}
		_ = s.Sleep(ctx, 10*time.Microsecond)
	}
	started := w.DB.StatementsOf(pods.StmtListedOpenChannels)
	pod.Relay.Invalidate(msg)
	if open {
		s.Probe("oc/drop-during-open-read")
	}
	if _, err := pod.OC.Accessible(ctx, community, reader); err != nil {
		return err
	}
	_ = first.Wait(ctx)
	reads := w.DB.StatementsOf(pods.StmtListedOpenChannels) - started
	smp.Of++
	if want := map[bool]int64{true: 1, false: 0}[open]; reads != want {
		smp.Wrongly(func() string {
			return fmt.Sprintf("a lookup after a %s invalidation applied during an open-set read in flight ran %d open-set reads of its own (want %d): after a community-wide drop it must not join the read that began before it",
				msg.Kind, reads, want)
		})
		return fmt.Errorf("OC-5: %s", smp.Witness)
	}
	return nil
}

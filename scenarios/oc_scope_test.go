package scenarios

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// OC-5: scoped invalidation. A community-wide accessible-channel,
// visibility or channel-deleted invalidation drops both halves; a
// membership invalidation drops only that reader's member half. After an
// invalidation is applied locally, the next lookup re-reads from the
// database exactly the halves it dropped, counted per statement. Seeds vary
// the reader, the message and the order.
func TestOC5_ScopedInvalidation(t *testing.T) {
	type seedCount struct{ steps, wrong int }
	var per claims.PerSeed[seedCount]
	var first string
	sum := simtest.Run(t, simtest.Options{Seeds: 20}, func(s *sim.Sim) error {
		steps, wrong := 0, 0
		defer func() { per.Set(s.Seed(), seedCount{steps, wrong}) }()
		ctx := context.Background()
		c := relay.DefaultChurn()
		tables, err := c.Tables()
		if err != nil {
			return err
		}
		w, err := relay.NewWorld(s, relay.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency}}, tables)
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		readers := append(append([]authz.ID{}, c.NonMembers...), c.Members...)
		count := func() (int64, int64) {
			return w.DB.StatementsOf(relay.StmtMemberChannels), w.DB.StatementsOf(relay.StmtListedOpenChannels)
		}
		for range 40 {
			r := readers[s.Rand().IntN(len(readers))]
			other := readers[s.Rand().IntN(len(readers))]
			ch := c.OpenChannels[s.Rand().IntN(len(c.OpenChannels))]
			type inv struct {
				msg          authz.Message
				member, open bool // which halves of r must be re-read
				name         string
			}
			invs := []inv{
				{authz.Message{Kind: authz.KindMembership, CommunityID: c.Community, UserID: r, ChannelID: ch}, true, false, "membership of the reader"},
				{authz.Message{Kind: authz.KindAccessibleAll, CommunityID: c.Community}, true, true, "accessible_all of the community"},
				{authz.Message{Kind: authz.KindChannelDeleted, CommunityID: c.Community, ChannelID: ch}, true, true, "channel_deleted in the community"},
				{authz.Message{Kind: authz.KindVisibility, CommunityID: c.Community, ChannelID: ch}, true, true, "visibility in the community"},
				{authz.Message{Kind: authz.KindAccessibleAll, CommunityID: c.OtherCommunity}, false, false, "accessible_all of another community"},
			}
			if other != r {
				invs = append(invs, inv{authz.Message{Kind: authz.KindMembership, CommunityID: c.Community, UserID: other, ChannelID: ch}, false, false, "membership of another reader"})
			}
			x := invs[s.Rand().IntN(len(invs))]
			// Warm both halves; the second lookup must be all hits.
			if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
				return err
			}
			m0, o0 := count()
			if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
				return err
			}
			if m1, o1 := count(); m1 != m0 || o1 != o0 {
				return fmt.Errorf("setup: a warm lookup re-read the database (%d member, %d open)", m1-m0, o1-o0)
			}
			pod.OC.Invalidate(x.msg)
			m1, o1 := count()
			if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
				return err
			}
			m2, o2 := count()
			steps++
			if (m2-m1 == 1) != x.member || (o2-o1 == 1) != x.open || m2-m1 > 1 || o2-o1 > 1 {
				wrong++
				if first == "" {
					first = fmt.Sprintf("after a %s invalidation, reader %s re-read %d member and %d open sets; expected member=%v open=%v",
						x.name, relay.Short(r), m2-m1, o2-o1, x.member, x.open)
				}
				return fmt.Errorf("OC-5: %s", first)
			}
		}
		return nil
	})
	steps, wrong := 0, 0
	for _, v := range per.Values() {
		steps += v.steps
		wrong += v.wrong
	}
	claims.Report(t, claims.Record{
		ID: "OC-5", Verdict: claims.Verdict(sum.Failures == 0 && wrong == 0),
		Measured: fmt.Sprintf("%d of %d invalidations re-read other halves than they drop", wrong, steps),
		Bound:    "0", Value: float64(wrong), Seeds: sum.Seeds, Witness: first,
	})
}

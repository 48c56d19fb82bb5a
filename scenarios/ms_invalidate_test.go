package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// msOtherCommunity holds one user whose entries no invalidation of
// msCommunity may touch.
var msOtherCommunity = authz.NewID('c', 2)

// msRoundTrip checks the wire format of one invalidation: it encodes, keeps
// channel_id for older relays when the message has one, and decodes to the
// same message (MS-9).
func msRoundTrip(m authz.Message) error {
	b, err := m.Encode()
	if err != nil {
		return fmt.Errorf("encoding %+v: %v", m, err)
	}
	if !m.ChannelID.IsZero() && !bytes.Contains(b, []byte(`"channel_id":"`+m.ChannelID.String()+`"`)) {
		return fmt.Errorf("the wire form %s lost channel_id %v", b, m.ChannelID)
	}
	back, err := authz.DecodeMessage(b)
	if err != nil {
		return fmt.Errorf("decoding %s: %v", b, err)
	}
	if back != m {
		return fmt.Errorf("%s decodes to %+v, not %+v", b, back, m)
	}
	return nil
}

// The round-trip check must be able to fail.
func TestMS9_RoundTripCheckReportsLoss(t *testing.T) {
	m := authz.Message{Kind: authz.KindMembership, CommunityID: msCommunity, UserID: msUser(1), ChannelID: msChannel(1)}
	if err := msRoundTrip(m); err != nil {
		t.Fatalf("a good message failed the round trip: %v", err)
	}
	m.ChannelID = authz.ID{}
	if msRoundTrip(m) == nil {
		t.Fatal("a membership message without channel_id passed the round trip")
	}
}

// TestMS9_InvalidationDropsUserEntries checks MS-9: membership changes
// remove the relevant user or community entries, and invalidation messages
// keep channel_id for compatibility. Three pods on a reliable bus; users of
// msCommunity with random memberships, and one user of another community.
// Each step warms every user on every pod, then applies one change:
//
//   - a membership grant or removal through a random pod (World.Write:
//     commit, local invalidation, publish): that user must re-read on every
//     pod, and nobody else;
//   - a community-wide message (accessible_all or channel_deleted) published
//     on the bus: every user of the community must re-read on every pod,
//     the other community's user must not;
//   - a visibility message: nobody re-reads.
//
// Re-reads are counted at the database, one user and pod at a time; every
// answer must match the tables, every message must round-trip with its
// channel_id, and no pod may drop a message as malformed.
func TestMS9_InvalidationDropsUserEntries(t *testing.T) {
	const nUsers, nChannels, steps = 4, 6, 25
	type seedFigures struct {
		reloads, checked int64
		worst            claims.Max // |re-reads - expected| per (pod, user)
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 10}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		members := randomMembers(r, nUsers, nChannels)
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		other, otherCh := authz.NewID('o', 1), authz.NewID('x', 1)
		if err := tables.AddChannel(relay.Channel{ID: otherCh, Community: msOtherCommunity}); err != nil {
			return err
		}
		if err := tables.SetMember(other, otherCh, true); err != nil {
			return err
		}
		w, err := relay.NewWorld(s, relay.Config{Pods: 3, DB: simdb.Config{PoolSize: 8, Latency: simdb.DefaultLatency}}, tables)
		if err != nil {
			return err
		}
		ctx := context.Background()
		type subject struct{ community, user, channel authz.ID }
		var subjects []subject
		for u := range nUsers {
			subjects = append(subjects, subject{msCommunity, msUser(u + 1), msChannel(1)})
		}
		subjects = append(subjects, subject{msOtherCommunity, other, otherCh})
		// check asks pod about one channel of sub and returns the loads it
		// caused (checks run one at a time, so the count is theirs).
		check := func(pod *relay.Pod, sub subject, ch authz.ID) (int64, error) {
			before := w.DB.StatementsOf(relay.StmtActiveMemberships)
			got, err := pod.MS.IsMember(ctx, sub.community, sub.user, ch)
			fig.checked++
			if err != nil {
				return 0, err
			}
			state := w.DB.State()
			if want := state.IsActiveMember(sub.community, sub.user, ch); got != want {
				return 0, fmt.Errorf("MS-9: %s asked %s/%s: got %v, truth %v", pod.Name, relay.Short(sub.user), relay.Short(ch), got, want)
			}
			return w.DB.StatementsOf(relay.StmtActiveMemberships) - before, nil
		}
		for step := range steps {
			for _, pod := range w.Pods { // warm every entry
				for _, sub := range subjects {
					if _, err := check(pod, sub, sub.channel); err != nil {
						return err
					}
				}
			}
			var msg authz.Message
			dropped := map[authz.ID]bool{} // users whose entries the change must drop
			ch := msChannel(1 + r.IntN(nChannels))
			switch k := r.IntN(10); {
			case k < 7: // a membership change, half of them on a channel the user's snapshot lacks
				u := r.IntN(nUsers)
				user := msUser(u + 1)
				change := relay.RemoveMember
				if !w.DB.State().IsActiveMember(msCommunity, user, ch) {
					change = relay.GrantMember
				}
				msg = authz.Message{Kind: authz.KindMembership, CommunityID: msCommunity, UserID: user, ChannelID: ch}
				if err := w.Write(ctx, w.Pods[r.IntN(len(w.Pods))], -1, change, msCommunity, user, ch); err != nil {
					return err
				}
				dropped[user] = true
			default:
				msg = authz.Message{Kind: authz.KindAccessibleAll, CommunityID: msCommunity}
				if k == 8 {
					msg = authz.Message{Kind: authz.KindChannelDeleted, CommunityID: msCommunity, ChannelID: ch}
				}
				if k == 9 {
					msg = authz.Message{Kind: authz.KindVisibility, CommunityID: msCommunity, ChannelID: ch}
				} else {
					for u := range nUsers {
						dropped[msUser(u+1)] = true
					}
				}
				b, err := msg.Encode()
				if err != nil {
					return err
				}
				if err := w.Bus.Publish(ctx, "admin", b); err != nil {
					return err
				}
			}
			if err := msRoundTrip(msg); err != nil {
				return fmt.Errorf("MS-9: %v", err)
			}
			_ = s.Sleep(ctx, time.Millisecond) // let the reliable bus deliver
			for _, pod := range w.Pods {
				for _, sub := range subjects {
					probe := ch
					if sub.community != msCommunity {
						probe = sub.channel
					}
					n, err := check(pod, sub, probe)
					if err != nil {
						return err
					}
					fig.reloads += n
					want := int64(0)
					if dropped[sub.user] {
						want = 1
					}
					fig.worst.Observe(float64(msAbs64(n-want)), func() string {
						return fmt.Sprintf("seed %#x step %d: after %s %s/%s/%s, %s re-read %s %d times (want %d)",
							s.Seed(), step, msg.Kind, relay.Short(msg.CommunityID), msShortID(msg.UserID), msShortID(msg.ChannelID), pod.Name, relay.Short(sub.user), n, want)
					})
					if n != want {
						return fmt.Errorf("MS-9: after a %s message (user %s, channel %s), %s's next check of %s/%s caused %d membership reads, want %d",
							msg.Kind, msShortID(msg.UserID), msShortID(msg.ChannelID), pod.Name, relay.Short(sub.community), relay.Short(sub.user), n, want)
					}
				}
			}
		}
		for _, pod := range w.Pods {
			if pod.BadMessages > 0 {
				return fmt.Errorf("MS-9: %s dropped %d invalidations as malformed", pod.Name, pod.BadMessages)
			}
		}
		return nil
	})
	var reloads, checked int64
	results.Each(func(_ uint64, f *seedFigures) { reloads, checked = reloads+f.reloads, checked+f.checked })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-9", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("max %v unexpected or missing re-reads per (pod, user) after an invalidation; %d re-reads over %d checks; every message round-tripped with channel_id", worst.Value, reloads, checked),
		Bound:    "0: exactly the invalidated user's (or community's) entries re-read", Value: worst.Value, Unit: "reads", Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "3 pods, reliable bus; membership grants/removals via World.Write, accessible_all / channel_deleted / visibility via the bus; one user of another community",
	})
}

func msAbs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// msShortID names an ID for a witness, "-" for the zero ID (a message
// field its kind does not use).
func msShortID(id authz.ID) string {
	if id.IsZero() {
		return "-"
	}
	return relay.Short(id)
}

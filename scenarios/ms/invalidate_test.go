package ms

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// otherCommunity holds one user whose entries no invalidation of
// community may touch.
var otherCommunity = authz.NewID('c', 2)

// roundTrip checks the wire format of one invalidation: it encodes, keeps
// channel_id for older relays when the message has one, and decodes to the
// same message (MS-9).
func roundTrip(m authz.Message) error {
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
	m := authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user(1), ChannelID: channel(1)}
	if err := roundTrip(m); err != nil {
		t.Fatalf("a good message failed the round trip: %v", err)
	}
	m.ChannelID = authz.ID{}
	if roundTrip(m) == nil {
		t.Fatal("a membership message without channel_id passed the round trip")
	}
}

// TestMS9_InvalidationDropsUserEntries checks MS-9: membership changes
// remove the relevant user or community entries, and invalidation messages
// keep channel_id for compatibility. Three pods on a reliable bus; users of
// community with random memberships, and one user of another community.
// Each step warms every user on every pod, each pod in an order drawn from
// the seed, then applies one change. So the entry a change must drop is
// sometimes its pod's most recently used, sometimes its least, sometimes in
// between (a walk over the entries that skips one end is seen). A change is
// one of these:
//
//   - A membership grant or removal through a random pod (World.Write:
//     commit, local invalidation, publish). That user must re-read on every
//     pod, and nobody else.
//   - A community-wide message (accessible_all or channel_deleted) published
//     on the bus. Every user of the community must re-read on every pod,
//     the other community's user must not.
//   - A visibility message. Nobody re-reads.
//   - A message that fails validation, handed to every pod's receiving
//     fan-out (relay.Invalidate): every user of its community re-reads, or
//     every user of every community when it names none.
//
// Re-reads are counted at the database, one user and pod at a time. Every
// answer must match the tables, every message must round-trip with its
// channel_id, and no pod may drop a message as malformed.
//
// The probes require both ends: a pod whose most recently used entry, and
// one whose least recently used entry, the change had to drop.
func TestMS9_InvalidationDropsUserEntries(t *testing.T) {
	const nUsers, nChannels, steps = 4, 6, 25
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-9", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			members := randomMembers(r, nUsers, nChannels)
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			other, otherCh := authz.NewID('o', 1), authz.NewID('x', 1)
			if err := tables.AddChannel(authztest.Channel{ID: otherCh, Community: otherCommunity}); err != nil {
				return smp, err
			}
			if err := tables.SetMember(other, otherCh, true); err != nil {
				return smp, err
			}
			w, err := pods.NewWorld(s, pods.Config{Pods: 3, DB: simdb.Config{PoolSize: 8, Latency: simdb.DefaultLatency}}, tables)
			if err != nil {
				return smp, err
			}
			ctx := context.Background()
			type subject struct{ community, user, channel authz.ID }
			var subjects []subject
			for u := range nUsers {
				subjects = append(subjects, subject{community, user(u + 1), channel(1)})
			}
			subjects = append(subjects, subject{otherCommunity, other, otherCh})
			// check asks pod about one channel of sub and returns the loads it
			// caused (checks run one at a time, so the count is theirs).
			check := func(pod *pods.Pod, sub subject, ch authz.ID) (int64, error) {
				before := w.DB.StatementsOf(pods.StmtActiveMemberships)
				got, err := pod.MS.IsMember(ctx, sub.community, sub.user, ch)
				smp.Of++
				if err != nil {
					return 0, err
				}
				state := w.DB.State()
				if want := state.IsActiveMember(sub.community, sub.user, ch); got != want {
					return 0, fmt.Errorf("MS-9: %s asked %s/%s: got %v, truth %v", pod.Name, pods.Short(sub.user), pods.Short(ch), got, want)
				}
				return w.DB.StatementsOf(pods.StmtActiveMemberships) - before, nil
			}
			// order is each pod's warm order of the step: a hit moves its
			// entry to the front, so the last warmed is the pod's most
			// recently used entry when the change arrives, the first its
			// least.
			order := make([][]subject, len(w.Pods))
			for step := range steps {
				for i, pod := range w.Pods { // warm every entry
					order[i] = slices.Clone(subjects)
					r.Shuffle(len(order[i]), func(a, b int) { order[i][a], order[i][b] = order[i][b], order[i][a] })
					for _, sub := range order[i] {
						if _, err := check(pod, sub, sub.channel); err != nil {
							return smp, err
						}
					}
				}
				var msg authz.Message
				dropped := map[authz.ID]bool{} // users whose entries the change must drop
				ch := channel(1 + r.IntN(nChannels))
				switch k := r.IntN(12); {
				case k >= 10: // a message that fails Validate, handed to the receiving fan-out (relay.Invalidate): it drops its community, or everything without one
					msg = authz.Message{Kind: "bogus", CommunityID: community, ChannelID: ch}
					if k == 11 {
						msg.CommunityID = authz.ID{}
						dropped[other] = true
					}
					for u := range nUsers {
						dropped[user(u+1)] = true
					}
					for _, pod := range w.Pods {
						pod.Relay.Invalidate(msg)
					}
				case k < 7: // a membership change, half of them on a channel the user's snapshot lacks
					u := r.IntN(nUsers)
					user := user(u + 1)
					change := pods.RemoveMember
					if !w.DB.State().IsActiveMember(community, user, ch) {
						change = pods.GrantMember
					}
					msg = authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: ch}
					if err := w.Write(ctx, w.Pods[r.IntN(len(w.Pods))], -1, change, community, user, ch); err != nil {
						return smp, err
					}
					dropped[user] = true
				default:
					msg = authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community}
					if k == 8 {
						msg = authz.Message{Kind: authz.KindChannelDeleted, CommunityID: community, ChannelID: ch}
					}
					if k == 9 {
						msg = authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: ch}
					} else {
						for u := range nUsers {
							dropped[user(u+1)] = true
						}
					}
					b, err := msg.Encode()
					if err != nil {
						return smp, err
					}
					if err := w.Bus.Publish(ctx, "admin", b); err != nil {
						return smp, err
					}
				}
				if msg.Validate() == nil {
					if err := roundTrip(msg); err != nil {
						return smp, fmt.Errorf("MS-9: %v", err)
					}
				}
				for i := range w.Pods {
					if dropped[order[i][len(order[i])-1].user] {
						s.Probe(probeDropTargetMRU)
					}
					if dropped[order[i][0].user] {
						s.Probe(probeDropTargetLRU)
					}
				}
				_ = s.Sleep(ctx, time.Millisecond) // let the reliable bus deliver
				for _, pod := range w.Pods {
					for _, sub := range subjects {
						probe := ch
						if sub.community != community {
							probe = sub.channel
						}
						n, err := check(pod, sub, probe)
						if err != nil {
							return smp, err
						}
						want := int64(0)
						if dropped[sub.user] {
							want = 1
						}
						if n != want {
							smp.Wrongly(func() string {
								return fmt.Sprintf("step %d: after %s %s/%s/%s, %s re-read %s %d times (want %d)",
									step, msg.Kind, pods.Short(msg.CommunityID), shortID(msg.UserID), shortID(msg.ChannelID), pod.Name, pods.Short(sub.user), n, want)
							})
							return smp, fmt.Errorf("MS-9: after a %s message (user %s, channel %s), %s's next check of %s/%s caused %d membership reads, want %d",
								msg.Kind, shortID(msg.UserID), shortID(msg.ChannelID), pod.Name, pods.Short(sub.community), pods.Short(sub.user), n, want)
						}
					}
				}
			}
			for _, pod := range w.Pods {
				if pod.BadMessages > 0 {
					return smp, fmt.Errorf("MS-9: %s dropped %d invalidations as malformed", pod.Name, pod.BadMessages)
				}
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d checks after an invalidation re-read another set of users than it drops (or answered wrong); every message round-tripped with its channel_id: %s", o.Wrong, o.Of, o.SeedsText())
		},
		Note: "3 pods, reliable bus; membership grants/removals via World.Write, accessible_all / channel_deleted / visibility via the bus, messages that fail validation via relay.Invalidate; one user of another community; each pod warmed in a seed-drawn order",
		Probes: []claims.Probe{
			{Name: probeDropTargetMRU, What: "a change had to drop a pod's most recently used entry", Min: 100},
			{Name: probeDropTargetLRU, What: "a change had to drop a pod's least recently used entry", Min: 100},
		},
	})
}

// MS-9's probes: the entry a change must drop was at one end of its pod's
// recency order when the change arrived.
const (
	probeDropTargetMRU = "ms/drop-target-was-most-recently-used"
	probeDropTargetLRU = "ms/drop-target-was-least-recently-used"
)

// shortID names an ID for a witness, "-" for the zero ID (a message
// field its kind does not use).
func shortID(id authz.ID) string {
	if id.IsZero() {
		return "-"
	}
	return pods.Short(id)
}

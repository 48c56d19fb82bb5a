package membership_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// MS-9: which entries each invalidation drops. Three entries: (k1, u1),
// (k1, u2), (k2, u1). After each message the test checks all three and
// counts which re-read the database.
func TestInvalidationScoping(t *testing.T) {
	k1, k2 := community, authz.NewID('k', 2)
	u1, u2 := user, authz.NewID('u', 2)
	keys := [][2]authz.ID{{k1, u1}, {k1, u2}, {k2, u1}}
	for _, tc := range []struct {
		name    string
		msg     authz.Message
		reloads [3]bool
	}{
		{"membership by user, whatever the channel", authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: u1, ChannelID: ch(99)}, [3]bool{true, false, false}},
		{"membership of the other user", authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: u2, ChannelID: ch(1)}, [3]bool{false, true, false}},
		{"accessible_all", authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1}, [3]bool{true, true, false}},
		{"channel_deleted", authz.Message{Kind: authz.KindChannelDeleted, CommunityID: k2, ChannelID: ch(3)}, [3]bool{false, false, true}},
		{"visibility changes no membership", authz.Message{Kind: authz.KindVisibility, CommunityID: k1, ChannelID: ch(1)}, [3]bool{false, false, false}},
		{"malformed: unknown kind drops the community", authz.Message{Kind: "everything", CommunityID: k2}, [3]bool{false, false, true}},
		{"malformed: no community drops everything", authz.Message{Kind: authz.KindMembership, UserID: u1, ChannelID: ch(1)}, [3]bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reloads [3]bool
			var wrong []string
			simRun(t, 1, func(s *sim.Sim) {
				w := newWorld(t, s, 0, nil, membership.Config{}, nil)
				for i := 1; i <= 4; i++ {
					comm := k1
					if i > 2 {
						comm = k2
					}
					_ = w.db.AddChannel(authztestChannel(ch(i), comm))
				}
				_ = w.db.SetMember(u1, ch(1), true)
				_ = w.db.SetMember(u2, ch(2), true)
				_ = w.db.SetMember(u1, ch(3), true)
				check := func() {
					for i, k := range keys {
						before := w.loads()
						ok, err := w.c.IsMember(bg, k[0], k[1], ch(1))
						if err != nil || ok != (i == 0) {
							wrong = append(wrong, k[0].String()+"/"+k[1].String())
						}
						reloads[i] = w.loads() > before
					}
				}
				check()
				w.c.Invalidate(tc.msg)
				check()
			})
			assert.Empty(t, wrong)
			assert.Equal(t, tc.reloads, reloads)
		})
	}
}

// MS-9: a membership granted and invalidated is visible at the next check,
// although the cached list did not contain the channel: invalidation is by
// user, not by the channels a snapshot holds. The message arrives in its
// wire form, channel_id included, as an older relay would send it.
func TestGrantInvalidationByUser(t *testing.T) {
	var before, after bool
	simRun(t, 1, func(s *sim.Sim) {
		w := newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{}, nil)
		before, _ = w.c.IsMember(bg, community, user, ch(2))
		w.grant(2)
		wire, err := w.membershipMsg(2).Encode()
		if err != nil || !strings.Contains(string(wire), `"channel_id"`) {
			s.Failf("encode: %v %s", err, wire)
		}
		msg, err := authz.DecodeMessage(wire)
		if err != nil {
			s.Failf("decode: %v", err)
		}
		w.c.Invalidate(msg)
		after, _ = w.c.IsMember(bg, community, user, ch(2))
	})
	assert.False(t, before)
	assert.True(t, after, "a grant is seen once its invalidation is applied")
}

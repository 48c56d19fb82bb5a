package accesschannels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

// reads is how many member and open statements the database ran.
type reads struct{ member, open int64 }

func dbReads(db *authztest.DB) reads {
	st := db.Stats()
	return reads{st.ByStatement[authztest.StmtMemberChannels], st.ByStatement[authztest.StmtListedOpenChannels]}
}

// OC-5: after an invalidation is applied, the next lookup re-reads exactly
// the halves the invalidation's scope covers, counted at the database.
func TestScopedInvalidationRereadsOnlyTheAffectedHalves(t *testing.T) {
	type scenario struct {
		name string
		msg  authz.Message
		want map[string]reads // DB reads of the next lookup of each reader
	}
	u1, u2, u3 := user(1), user(2), user(3)
	scenarios := []scenario{
		{
			"membership", authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: u1, ChannelID: ch(2)},
			map[string]reads{"u1@k1": {1, 0}, "u2@k1": {0, 0}, "u1@k2": {0, 0}, "u3@k2": {0, 0}},
		},
		{
			"accessible_all", authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1},
			// the open half is read once and shared by u2's lookup.
			map[string]reads{"u1@k1": {1, 1}, "u2@k1": {1, 0}, "u1@k2": {0, 0}, "u3@k2": {0, 0}},
		},
		{
			"visibility", authz.Message{Kind: authz.KindVisibility, CommunityID: k1, ChannelID: ch(1)},
			map[string]reads{"u1@k1": {1, 1}, "u2@k1": {1, 0}, "u1@k2": {0, 0}, "u3@k2": {0, 0}},
		},
		{
			"channel_deleted", authz.Message{Kind: authz.KindChannelDeleted, CommunityID: k1, ChannelID: ch(2)},
			map[string]reads{"u1@k1": {1, 1}, "u2@k1": {1, 0}, "u1@k2": {0, 0}, "u3@k2": {0, 0}},
		},
		{
			"malformed (ignored)", authz.Message{Kind: authz.KindMembership, CommunityID: k1}, // no user
			map[string]reads{"u1@k1": {0, 0}, "u2@k1": {0, 0}, "u1@k2": {0, 0}, "u3@k2": {0, 0}},
		},
	}
	order := []struct {
		name      string
		community authz.ID
		reader    authz.ID
	}{{"u1@k1", k1, u1}, {"u2@k1", k1, u2}, {"u1@k2", k2, u1}, {"u3@k2", k2, u3}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			got := map[string]reads{}
			runSim(t, 1, func(s *sim.Sim) {
				db := authztest.New(s)
				mustAdd(s, db, openCh(ch(1), k1), privateCh(ch(2), k1), openCh(ch(3), k2))
				mustMember(s, db, u1, ch(2))
				c := mustCache(s, db, accesschannels.Config{})
				for _, o := range order { // prime every half (time stands still)
					_ = accessible(s, c, o.community, o.reader)
				}
				c.Invalidate(sc.msg)
				for _, o := range order {
					before := dbReads(db)
					_ = accessible(s, c, o.community, o.reader)
					after := dbReads(db)
					got[o.name] = reads{after.member - before.member, after.open - before.open}
				}
			})
			assert.Equal(t, sc.want, got)
		})
	}
}

func TestApplyReportsMalformedMessages(t *testing.T) {
	runSim(t, 1, func(s *sim.Sim) {
		c := mustCache(s, authztest.New(s), accesschannels.Config{})
		for _, m := range []authz.Message{
			{Kind: authz.KindAccessibleAll},
			{Kind: "everything", CommunityID: k1},
			{Kind: authz.KindMembership, CommunityID: k1, ChannelID: ch(1)},
		} {
			if err := c.Apply(m); err == nil {
				s.Failf("Apply(%+v) accepted a malformed message", m)
			}
		}
		if err := c.Apply(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1}); err != nil {
			s.Failf("Apply: %v", err)
		}
	})
}

var _ authz.Invalidator = (*accesschannels.Cache)(nil)

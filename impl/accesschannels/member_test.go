package accesschannels_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

// OC-7: grants through membership keep the pre-existing 10 s window. A
// membership removed with its invalidation lost is still granted from the
// member half until TTL after the fill, and denied from then on.
func TestMemberHalfHonoursTTL(t *testing.T) {
	m := ch(1)
	var before, edge, after bool
	var st accesschannels.Stats
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		mustAdd(s, db, privateCh(m, k1))
		mustMember(s, db, user(1), m)
		c := mustCache(s, db, accesschannels.Config{})
		_ = granted(s, c, k1, user(1), m) // fill at t=0
		_ = db.SetMember(user(1), m, false)
		sleepUntil(s, 5*time.Second)
		before = granted(s, c, k1, user(1), m)
		sleepUntil(s, ttl-time.Nanosecond)
		edge = granted(s, c, k1, user(1), m)
		sleepUntil(s, ttl)
		after = granted(s, c, k1, user(1), m)
		st = c.Stats()
	})
	assert.True(t, before, "member half still cached at 5 s")
	assert.True(t, edge, "member half still cached 1 ns before TTL")
	assert.False(t, after, "OC-7: member half expired at TTL")
	assert.Equal(t, int64(2), st.MemberHits)
	assert.Equal(t, int64(2), st.MemberMisses, "the fill at 0 and the re-read at TTL")
}

// OC-6, the documented debt, reproduced: the member fill is an unfenced
// read-then-insert. A member read begins at 0 and takes 800 ms; at 300 ms
// the membership is removed and the invalidation APPLIED on this very pod.
// The fill still inserts the pre-removal set at 800 ms and serves it to that
// reader until 800 ms + TTL: staleness up to TTL + read time - 300 ms. Only
// that reader is affected.
func TestRacedMemberFillReinsertsAStaleSetUntilTTL(t *testing.T) {
	m := ch(1)
	var mid, late, after, other bool
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		db.Latency = latency(authztest.StmtMemberChannels, 800*time.Millisecond)
		mustAdd(s, db, privateCh(m, k1))
		mustMember(s, db, user(1), m)
		mustMember(s, db, user(2), m)
		c := mustCache(s, db, accesschannels.Config{})
		s.Go("writer", func() {
			sleepUntil(s, 300*time.Millisecond)
			_ = db.SetMember(user(1), m, false)
			_ = db.SetMember(user(2), m, false)
			c.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: user(1), ChannelID: m})
			c.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: user(2), ChannelID: m})
		})
		_ = granted(s, c, k1, user(1), m) // the racing fill: 0 .. 800 ms
		sleepUntil(s, time.Second)
		mid = granted(s, c, k1, user(1), m)
		other = granted(s, c, k1, user(2), m)
		sleepUntil(s, 800*time.Millisecond+ttl-time.Nanosecond)
		late = granted(s, c, k1, user(1), m)
		sleepUntil(s, 800*time.Millisecond+ttl)
		after = granted(s, c, k1, user(1), m)
	})
	assert.True(t, mid, "OC-6: the raced fill re-inserted the removed membership")
	assert.True(t, late, "OC-6: ... and it is served until TTL after the insertion")
	assert.False(t, after, "OC-7: but no longer")
	assert.False(t, other, "OC-6: another reader of the same channel is not affected")
}

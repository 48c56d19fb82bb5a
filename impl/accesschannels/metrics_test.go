package accesschannels_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

// OC-9: the counters equal the events of a scripted sequence, each lookup
// counting one member-half and one open-half event, under the seed's names.
func TestCountersMatchObservedEvents(t *testing.T) {
	type event struct {
		at     time.Duration
		reader uint64
		msg    *authz.Message
	}
	inval := authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1}
	script := []event{
		{0, 1, nil},                      // member miss, open absent
		{0, 1, nil},                      // member hit, open hit
		{0, 2, nil},                      // member miss, open hit
		{500 * time.Millisecond, 2, nil}, // member hit, open hit
		{time.Second, 1, nil},            // member hit, open expired (read at 0)
		{time.Second, 3, nil},            // member miss, open hit (re-read at 1 s)
		{time.Second, 0, &inval},         // drops both halves of k1
		{time.Second, 1, nil},            // member miss, open absent
		{time.Second + ttl, 1, nil},      // member miss (TTL), open absent (TTL removed it)
	}
	var snap map[string]int64
	var st accesschannels.Stats
	var text string
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		mustAdd(s, db, openCh(ch(1), k1))
		c := mustCache(s, db, accesschannels.Config{})
		for _, e := range script {
			sleepUntil(s, e.at)
			if e.msg != nil {
				c.Invalidate(*e.msg)
				continue
			}
			_ = accessible(s, c, k1, user(e.reader))
		}
		snap = c.Metrics().Snapshot()
		st = c.Stats()
		var b strings.Builder
		if err := c.Metrics().WriteText(&b); err != nil {
			s.Failf("%v", err)
		}
		text = b.String()
	})
	assert.Equal(t, map[string]int64{
		"open_channels_cache_hits_total":                     4,
		`open_channels_cache_misses_total{reason="absent"}`:  3,
		`open_channels_cache_misses_total{reason="expired"}`: 1,
		"accessible_channels_cache_hits_total":               3,
		"accessible_channels_cache_misses_total":             5,
	}, snap)
	assert.Equal(t, accesschannels.Stats{MemberHits: 3, MemberMisses: 5, OpenHits: 4, OpenMissesAbsent: 3, OpenMissesExpired: 1}, st)
	require.Contains(t, text, "# TYPE open_channels_cache_misses_total counter\n")
	assert.Contains(t, text, `open_channels_cache_misses_total{reason="expired"} 1`+"\n")
	assert.Contains(t, text, "accessible_channels_cache_misses_total 5\n")
}

// OC-9 under concurrency: for random concurrent workloads, every lookup adds
// exactly one event per half, member misses equal member-channel statements
// (the member half shares no reads), and open-set statements never exceed
// open misses (shared reads).
func TestCountersAddUpUnderConcurrency(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		var lookups int64
		var st accesschannels.Stats
		var rd reads
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = func(string) time.Duration { return time.Duration(s.Rand().IntN(300)) * time.Millisecond }
			mustAdd(s, db, openCh(ch(1), k1), privateCh(ch(2), k1), openCh(ch(3), k2))
			mustMember(s, db, user(1), ch(2))
			c := mustCache(s, db, accesschannels.Config{})
			var fs []func()
			for i := range 8 {
				fs = append(fs, func() {
					for j := range 10 {
						_ = s.Sleep(bg, time.Duration(s.Rand().IntN(400))*time.Millisecond)
						k := []authz.ID{k1, k2}[(i+j)%2]
						if s.Rand().IntN(5) == 0 {
							c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k})
						}
						_ = accessible(s, c, k, user(uint64(1+s.Rand().IntN(3))))
						lookups++
					}
				})
			}
			spawnAll(s, "client", fs...)
			st, rd = c.Stats(), dbReads(db)
		})
		assert.Equal(t, lookups, st.MemberHits+st.MemberMisses, "seed %d", seed)
		assert.Equal(t, lookups, st.OpenHits+st.OpenMissesAbsent+st.OpenMissesExpired, "seed %d", seed)
		assert.Equal(t, rd.member, st.MemberMisses, "seed %d", seed)
		assert.LessOrEqual(t, rd.open, st.OpenMissesAbsent+st.OpenMissesExpired, "seed %d", seed)
		assert.Positive(t, st.OpenHits, "seed %d", seed)
	}
}

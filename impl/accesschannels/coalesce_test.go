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

// OC-8: K concurrent cold readers of one community cause one open-set read
// (and K member reads, the member half being per reader).
func TestColdBurstReadsTheOpenSetOnce(t *testing.T) {
	const k = 50
	for seed := uint64(1); seed <= 20; seed++ {
		var rd reads
		var st accesschannels.Stats
		var wrong int
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = latency(authztest.StmtListedOpenChannels, 50*time.Millisecond)
			mustAdd(s, db, openCh(ch(1), k1), openCh(ch(2), k1))
			c := mustCache(s, db, accesschannels.Config{})
			var fs []func()
			for i := range k {
				fs = append(fs, func() {
					if got := accessible(s, c, k1, user(uint64(i+1))); len(got) != 2 {
						wrong++
					}
				})
			}
			spawnAll(s, "reader", fs...)
			rd, st = dbReads(db), c.Stats()
		})
		assert.Zero(t, wrong, "seed %d", seed)
		assert.Equal(t, reads{member: k, open: 1}, rd, "seed %d", seed)
		assert.Equal(t, int64(k), st.OpenMissesAbsent+st.OpenHits, "seed %d", seed)
	}
}

// OC-8 with reads slower than MaxAgeOpen: a reader joins a read in flight
// only while it is younger than MaxAgeOpen, so steady traffic starts at most
// one open-set read per MaxAgeOpen, and no answer is older than MaxAgeOpen.
func TestReadsSlowerThanMaxAgeStartOneReadPerMaxAge(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		var rd reads
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = latency(authztest.StmtListedOpenChannels, 2500*time.Millisecond)
			mustAdd(s, db, openCh(ch(1), k1))
			c := mustCache(s, db, accesschannels.Config{})
			_ = probeEvery(s, c, ch(1), 0, 5*time.Second, 100*time.Millisecond)
			rd = dbReads(db)
		})
		// Reads begin at 0, 1, 2, 3 and 4 s.
		assert.Equal(t, int64(5), rd.open, "seed %d", seed)
	}
}

// OC-8, per community: communities do not share reads or entries.
func TestCommunitiesHaveTheirOwnOpenSets(t *testing.T) {
	var rd reads
	var a, b []authz.ID
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		mustAdd(s, db, openCh(ch(1), k1), openCh(ch(2), k2))
		c := mustCache(s, db, accesschannels.Config{})
		for u := uint64(1); u <= 3; u++ {
			a = accessible(s, c, k1, user(u))
			b = accessible(s, c, k2, user(u))
		}
		rd = dbReads(db)
	})
	assert.Equal(t, []authz.ID{ch(1)}, a)
	assert.Equal(t, []authz.ID{ch(2)}, b)
	assert.Equal(t, reads{member: 6, open: 2}, rd)
}

// The cache adds no nondeterminism of its own (no map iteration, clock or
// goroutine outside rt): the same seed gives the same trace hash, and a
// different seed a different schedule.
func TestSameSeedSameTrace(t *testing.T) {
	workload := func(s *sim.Sim) {
		db := authztest.New(s)
		db.Latency = func(string) time.Duration { return time.Duration(s.Rand().IntN(50)) * time.Millisecond }
		mustAdd(s, db, openCh(ch(1), k1), privateCh(ch(2), k1))
		mustMember(s, db, user(1), ch(2))
		c := mustCache(s, db, accesschannels.Config{})
		var fs []func()
		for i := range 6 {
			fs = append(fs, func() {
				for j := range 5 {
					_ = accessible(s, c, k1, user(uint64(1+(i+j)%3)))
					if j == 2 {
						c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1})
					}
					_ = s.Sleep(bg, 300*time.Millisecond)
				}
			})
		}
		spawnAll(s, "client", fs...)
	}
	a, b, other := runSim(t, 42, workload), runSim(t, 42, workload), runSim(t, 43, workload)
	assert.Equal(t, a.Hash, b.Hash)
	assert.NotEqual(t, a.Hash, other.Hash)
}

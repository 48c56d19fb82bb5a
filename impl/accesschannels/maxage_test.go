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

// revocations are the seed's three ways an open channel stops being
// accessible to non-members, with the invalidation each one publishes.
var revocations = []struct {
	name   string
	revoke func(*authztest.Channel)
	kind   authz.Kind
}{
	{"private", func(c *authztest.Channel) { c.Open = false }, authz.KindVisibility},
	{"deleted", func(c *authztest.Channel) { c.Deleted = true }, authz.KindChannelDeleted},
	{"unlisted", func(c *authztest.Channel) { c.Listed = false }, authz.KindVisibility},
}

// The seed's own test, a_lost_open_set_invalidation_grants_a_revoked_channel_
// only_until_max_age: two relays on one database and no pub/sub between
// them. OC-2 (denied once the age passes, for new and cached readers) and
// OC-3 (a new reader IS granted inside the window).
func TestALostOpenSetInvalidationGrantsARevokedChannelOnlyUntilMaxAge(t *testing.T) {
	for _, rv := range revocations {
		t.Run(rv.name, func(t *testing.T) {
			x, m := ch(1), ch(2)
			earlier := user(1)
			var writerNew, windowNew, edgeNew, afterNew, afterEarlier bool
			var afterUnion, uncached []authz.ID
			var st accesschannels.Stats
			runSim(t, 1, func(s *sim.Sim) {
				db := authztest.New(s)
				mustAdd(s, db, openCh(x, k1), privateCh(m, k1))
				mustMember(s, db, earlier, m)
				readerPod := mustCache(s, db, accesschannels.Config{})
				writerPod := mustCache(s, db, accesschannels.Config{})

				// 1. prime both pods (the reader pod is the one that matters).
				if !granted(s, readerPod, k1, earlier, x) || !granted(s, writerPod, k1, earlier, x) {
					s.Failf("open channel not granted before the revocation")
				}
				// 2. revoke in the database; only the writer pod hears of it.
				sleepUntil(s, 100*time.Millisecond)
				if err := db.UpdateChannel(x, rv.revoke); err != nil {
					s.Failf("%v", err)
				}
				writerPod.Invalidate(authz.Message{Kind: rv.kind, CommunityID: k1, ChannelID: x})
				writerNew = granted(s, writerPod, k1, user(2), x)
				// 3. within the window, a reader with no cache entry is granted.
				windowNew = granted(s, readerPod, k1, user(3), x)
				sleepUntil(s, maxAgeOpen-time.Nanosecond)
				edgeNew = granted(s, readerPod, k1, user(4), x)
				// 4. the cached set ages past MaxAgeOpen (counted from t=0).
				sleepUntil(s, maxAgeOpen)
				// 5. a new reader and the earlier cached reader are denied.
				afterNew = granted(s, readerPod, k1, user(5), x)
				afterEarlier = granted(s, readerPod, k1, earlier, x)
				afterUnion = accessible(s, readerPod, k1, earlier)
				var err error
				uncached, err = readerPod.AccessibleUncached(bg, k1, earlier)
				if err != nil {
					s.Failf("%v", err)
				}
				st = readerPod.Stats()
			})
			assert.False(t, writerNew, "the writer pod applied its invalidation")
			assert.True(t, windowNew, "OC-3: a new reader is granted within the window")
			assert.True(t, edgeNew, "OC-3: still inside the window 1 ns before MaxAgeOpen")
			assert.False(t, afterNew, "OC-2: a new reader is denied once the open set is MaxAgeOpen old")
			assert.False(t, afterEarlier, "OC-2: an earlier cached reader is denied too")
			assert.Equal(t, []authz.ID{m}, afterUnion)
			assert.Equal(t, uncached, afterUnion, "OC-1")
			assert.Equal(t, int64(1), st.OpenMissesExpired, "exactly one re-read, at the age limit")
		})
	}
}

// probe is one lookup of a revoked channel by a reader never seen before.
type probe struct {
	invoke  time.Duration
	granted bool
}

// staleGrants returns the probes invoked at or after revokedAt that were
// still granted. It fails the test for any of them invoked MaxAgeOpen or more
// after revokedAt. That is the OC-2 bound as the audit states it: staleness
// of a grant = invoke − the last instant the channel was accessible.
func staleGrants(t *testing.T, probes []probe, revokedAt time.Duration) []probe {
	t.Helper()
	var stale []probe
	for _, p := range probes {
		if p.granted && p.invoke >= revokedAt {
			stale = append(stale, p)
			assert.Less(t, p.invoke-revokedAt, maxAgeOpen, "OC-2: grant %v after the revocation", p.invoke-revokedAt)
		}
	}
	return stale
}

// probeEvery starts a fresh reader every step from start to end, each on its
// own task, all asking for channel x of k1.
func probeEvery(s *sim.Sim, c *accesschannels.Cache, x authz.ID, start, end, step time.Duration) []probe {
	var probes []probe
	var fs []func()
	n := uint64(100)
	for at := start; at < end; at += step {
		n++
		reader, at := user(n), at
		fs = append(fs, func() {
			sleepUntil(s, at)
			ok := granted(s, c, k1, reader, x)
			probes = append(probes, probe{invoke: at, granted: ok})
		})
	}
	spawnAll(s, "probe", fs...)
	return probes
}

// OC-2 with a slow open-set read: the first read starts at 25 ms and takes
// 800 ms; the channel is made private at 100 ms with the invalidation lost.
// Because the age counts from the START of the read, the entry arriving at
// 825 ms is already 800 ms old and is served only until 1.025 s. Counted from
// fill completion it would be served until 1.825 s, 1.725 s after the
// revocation. (Probe instants avoid ties with completions, so the outcome is
// the same for every schedule.)
func TestSlowOpenReadIsAlreadyOldOnArrival(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		x := ch(1)
		var probes []probe
		var reads int64
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = latency(authztest.StmtListedOpenChannels, 800*time.Millisecond)
			mustAdd(s, db, openCh(x, k1))
			c := mustCache(s, db, accesschannels.Config{})
			s.Go("revoker", func() {
				sleepUntil(s, 100*time.Millisecond)
				_ = db.UpdateChannel(x, func(c *authztest.Channel) { c.Open = false })
			})
			probes = probeEvery(s, c, x, 25*time.Millisecond, 3*time.Second, 50*time.Millisecond)
			reads = db.Stats().ByStatement[authztest.StmtListedOpenChannels]
		})
		stale := staleGrants(t, probes, 100*time.Millisecond)
		// Grants after the revocation: probes at 125..975 ms, which joined
		// the first read or hit its entry before 1.025 s.
		assert.Len(t, stale, 18, "seed %d", seed)
		for _, p := range probes {
			if p.invoke >= 25*time.Millisecond+maxAgeOpen {
				assert.False(t, p.granted, "seed %d: probe at %v", seed, p.invoke)
			}
		}
		// Reads begin at 25 ms, 1.025 s and 2.025 s: one per MaxAgeOpen.
		assert.Equal(t, int64(3), reads, "seed %d", seed)
	}
}

// OC-4: an invalidation racing a fill, one pod, reliable delivery. A read
// runs from 50 to 830 ms; at 300 ms the channel is made private and the
// invalidation applied. The fill is still inserted at 830 ms (no fence) and
// serves the revoked channel at 850 and 950 ms, yet only until 1.05 s: within
// MaxAgeOpen of the revocation. Probes at 350..750 ms started a new read
// after the drop (it detached the read in flight) and are denied.
func TestInvalidationRacingAFillStaysWithinMaxAge(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		x := ch(1)
		var probes []probe
		var reads int64
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = latency(authztest.StmtListedOpenChannels, 780*time.Millisecond)
			mustAdd(s, db, openCh(x, k1))
			c := mustCache(s, db, accesschannels.Config{})
			s.Go("writer", func() {
				sleepUntil(s, 300*time.Millisecond)
				_ = db.UpdateChannel(x, func(c *authztest.Channel) { c.Open = false })
				c.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: k1, ChannelID: x})
			})
			probes = probeEvery(s, c, x, 50*time.Millisecond, 3*time.Second, 100*time.Millisecond)
			reads = db.Stats().ByStatement[authztest.StmtListedOpenChannels]
		})
		stale := staleGrants(t, probes, 300*time.Millisecond)
		assert.Equal(t, []probe{{850 * time.Millisecond, true}, {950 * time.Millisecond, true}}, stale, "seed %d", seed)
		// Reads begin at 50 ms, 350 ms (after the drop), 1.35 s and 2.35 s.
		assert.Equal(t, int64(4), reads, "seed %d", seed)
	}
}

// A read that began earlier but finishes later never replaces the entry of a
// read that began after it: the later read is fresher (and here it already
// saw the revocation). This is not a fence: nothing is discarded because of
// an invalidation, only because a fresher read is cached.
func TestAnOlderReadDoesNotReplaceANewerEntry(t *testing.T) {
	x := ch(1)
	var at900 bool
	var reads int64
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		slow := true
		db.Latency = func(stmt string) time.Duration {
			if stmt != authztest.StmtListedOpenChannels {
				return 0
			}
			if slow {
				slow = false
				return 800 * time.Millisecond
			}
			return 100 * time.Millisecond
		}
		mustAdd(s, db, openCh(x, k1))
		c := mustCache(s, db, accesschannels.Config{})
		s.Go("old reader", func() { _ = granted(s, c, k1, user(1), x) }) // read 0 .. 800 ms
		sleepUntil(s, 200*time.Millisecond)
		_ = db.UpdateChannel(x, func(c *authztest.Channel) { c.Open = false })
		c.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: k1, ChannelID: x})
		sleepUntil(s, 300*time.Millisecond)
		_ = granted(s, c, k1, user(2), x) // read 300 .. 400 ms
		sleepUntil(s, 900*time.Millisecond)
		at900 = granted(s, c, k1, user(3), x) // the old read finished at 800 ms
		reads = db.Stats().ByStatement[authztest.StmtListedOpenChannels]
	})
	assert.False(t, at900, "the entry of the read from 300 ms is kept")
	assert.Equal(t, int64(2), reads)
}

package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
	"github.com/windtunnel/windtunnel/impl/membership"
)

// deliveredWithin bounds how long an invalidation may take over Redis on
// loopback in these tests. It is far below every freshness window used with
// a connected bus (10 s), so an answer that changes within it was changed by
// the invalidation, not by expiry.
const deliveredWithin = 2 * time.Second

// world is one community with two private channels and a user, on two
// relays, as in the membership seed's signed WebSocket check.
type world struct {
	f               *pgtest.Fixture
	a, b            *relay
	community, user authz.ID
	general, secret authz.ID
}

func newWorld(t *testing.T, cfg relayConfig) *world {
	f := pgtest.New(t)
	var g ids
	w := &world{f: f, community: g.id('k'), user: g.id('u'), general: g.id('c'), secret: g.id('c')}
	f.AddChannels(
		authztest.Channel{ID: w.general, Community: w.community, Listed: true},
		authztest.Channel{ID: w.secret, Community: w.community, Listed: true},
	)
	w.a, w.b = newRelay(t, f, cfg), newRelay(t, f, cfg)
	return w
}

// answers is what one relay says about the user and one channel, through
// both caches: the membership check (MS) and the accessible-channel
// lookup's member half (OC).
func (w *world) answers(t *testing.T, r *relay, channel authz.ID) (ms, oc check) {
	ctx := ctxT(t)
	ms = timed(t, func() (bool, error) { return r.ms.IsMember(ctx, w.community, w.user, channel) })
	oc = timed(t, func() (bool, error) { return r.oc.Granted(ctx, w.community, w.user, channel) })
	return ms, oc
}

// set commits a membership change on relay a: SQL, then a's invalidation
// (local, and published if a is connected).
func (w *world) set(t *testing.T, channel authz.ID, active bool) {
	w.f.SetMember(w.user, channel, active)
	w.a.changed(t, authz.Message{Kind: authz.KindMembership, CommunityID: w.community, UserID: w.user, ChannelID: channel})
}

func (w *world) requireBoth(t *testing.T, r *relay, channel authz.ID, want bool, what string) {
	t.Helper()
	ms, oc := w.answers(t, r, channel)
	require.Equal(t, want, ms.ok, "membership cache: %s", what)
	require.Equal(t, want, oc.ok, "accessible channels: %s", what)
}

// awaitBoth polls relay r until both caches answer want, and returns how
// long that took; it fails after limit.
func (w *world) awaitBoth(t *testing.T, r *relay, channel authz.ID, want bool, limit time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		ms, oc := w.answers(t, r, channel)
		if ms.ok == want && oc.ok == want {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: relay did not answer %v within %v", what, want, limit)
	return 0
}

// Grant, remove and re-add across two relays connected by Redis, with the
// production windows (10 s): the other relay follows within milliseconds,
// because the invalidation arrives (MS-9, OC-5), not because its cache
// expired.
func TestGrantRemoveReAddAcrossRelaysOverRedis(t *testing.T) {
	bus, name := redisClient(t)
	w := newWorld(t, relayConfig{bus: bus, channel: name})

	// Non-members are denied, and both relays cache that.
	for _, r := range []*relay{w.a, w.b} {
		w.requireBoth(t, r, w.general, false, "before membership")
		w.requireBoth(t, r, w.secret, false, "before membership")
	}

	steps := []struct {
		name    string
		channel authz.ID
		active  bool
	}{
		{"grant general", w.general, true},
		{"grant secret", w.secret, true},
		{"remove general", w.general, false},
		{"re-add general", w.general, true},
	}
	for _, s := range steps {
		w.set(t, s.channel, s.active)
		w.requireBoth(t, w.a, s.channel, s.active, s.name+" on the writing relay")
		took := w.awaitBoth(t, w.b, s.channel, s.active, deliveredWithin, s.name+" on the other relay")
		t.Logf("%s: other relay followed in %v", s.name, took.Round(time.Microsecond))
	}
	w.requireBoth(t, w.b, w.secret, true, "secret unaffected by general's changes")

	snap := w.b.sub.Metrics().Snapshot()
	assert.Equal(t, int64(len(steps)), snap[redisbus.MetricApplied], "every change reached the other relay once")
	assert.Zero(t, snap[redisbus.MetricMalformed])
	ms := w.b.ms.Metrics().Snapshot()
	assert.Positive(t, ms[membership.MetricHits], "the other relay answered from snapshots between changes")
}

// The same with the other relay's Redis subscription cut: every
// invalidation to it is lost, so it answers from its cache until the
// freshness window (shortened to 1 s) ends, and never after (MS-2, MS-10;
// OC-7 for the member half). Then the subscription is restored and
// invalidations flow again.
func TestGrantRemoveReAddWithTheSubscriptionCut(t *testing.T) {
	const freshness = time.Second
	bus, name := redisClient(t)
	w := newWorld(t, relayConfig{bus: bus, channel: name,
		ms: membership.Config{Freshness: freshness},
		oc: accesschannels.Config{TTL: freshness, MaxAgeOpen: 300 * time.Millisecond}})
	ctx := ctxT(t)
	require.NoError(t, w.b.sub.Unsubscribe(ctx))

	for _, s := range []struct {
		name   string
		active bool
	}{{"grant", true}, {"remove", false}, {"re-add", true}} {
		// Prime the cut relay with the current answer.
		ms, oc := w.answers(t, w.b, w.general)
		require.Equal(t, !s.active, ms.ok, "%s: primed answer (membership)", s.name)
		require.Equal(t, !s.active, oc.ok, "%s: primed answer (accessible)", s.name)
		primed := oc.ret

		w.set(t, w.general, s.active)
		w.requireBoth(t, w.a, w.general, s.active, s.name+" on the writing relay")

		// The cut relay's entries were loaded no later than primed: their
		// connections were checked out (MS-2) and their member half
		// inserted (OC-7) before it. So a stale answer may start only
		// before primed + freshness, and must exist right after the change
		// (the lost invalidation is real).
		var stale, fresh int
		var staleUntil time.Duration
		for i := 0; i < 10_000; i++ {
			ms, oc := w.answers(t, w.b, w.general)
			for _, c := range []check{ms, oc} {
				if c.ok == s.active {
					fresh++
					continue
				}
				stale++
				staleUntil = max(staleUntil, c.invoke.Sub(primed))
				assert.True(t, c.invoke.Before(primed.Add(freshness)),
					"%s: stale answer %v after the cut relay's entries were loaded (freshness %v)", s.name, c.invoke.Sub(primed), freshness)
			}
			if i == 0 {
				assert.Equal(t, 2, stale, "%s: right after the change the cut relay must still answer from its cache", s.name)
			}
			if ms.ok == s.active && oc.ok == s.active {
				break
			}
			require.Less(t, time.Since(primed), freshness+deliveredWithin, "%s: the cut relay never caught up", s.name)
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s: cut relay stale for %v after loading (freshness %v), %d stale answers", s.name, staleUntil.Round(time.Millisecond), freshness, stale)
		assert.Positive(t, stale)
	}
	assert.Zero(t, w.b.sub.Metrics().Snapshot()[redisbus.MetricReceived], "nothing reached the cut relay")

	// Restore the subscription: invalidations flow again.
	require.NoError(t, w.b.sub.Resubscribe(ctx))
	w.requireBoth(t, w.b, w.general, true, "primed after resubscribe")
	w.set(t, w.general, false)
	took := w.awaitBoth(t, w.b, w.general, false, freshness/2, "remove after resubscribe")
	t.Logf("after resubscribe: other relay followed in %v", took.Round(time.Microsecond))
}

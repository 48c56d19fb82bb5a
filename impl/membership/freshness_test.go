package membership_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// waitingPool makes every checkout wait, as a saturated pool does, before
// handing over a connection of the database; the connection's checkout
// instant is when the wait ends.
type waitingPool struct {
	r    rt.Runtime
	db   *authztest.DB
	wait time.Duration
}

func (p *waitingPool) Acquire(ctx context.Context) (authz.Conn, error) {
	if err := p.r.Sleep(ctx, p.wait); err != nil {
		return nil, err
	}
	return p.db.Acquire(ctx)
}

// MS-2 and MS-10: with the invalidation lost, a revoked membership stays
// granted and a new one stays denied until exactly checkout + 10 s. That
// holds although the pool made the load wait 300 ms and the query took 2 s,
// so the load finished at 2.3 s. At checkout + 10 s the entry expires and the
// check reads again.
func TestFreshnessCountsFromCheckout(t *testing.T) {
	const poolWait, query = 300 * time.Millisecond, 2 * time.Second
	checkout := sim.Epoch.Add(poolWait)
	var w *world
	var info membership.EntryInfo
	type probe struct {
		at      time.Duration
		revoked bool // ch(1): member at load, revoked at 3 s without invalidation
		granted bool // ch(2): not a member at load, granted at 3 s without invalidation
		loads   int64
	}
	var probes []probe
	simRun(t, 3, func(s *sim.Sim) {
		w = newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{},
			func(db *authztest.DB) authz.Pool { return &waitingPool{r: s, db: db, wait: poolWait} })
		latency(w.db, authztest.StmtActiveMemberships, query)
		look := func() {
			a, err1 := w.c.IsMember(bg, community, user, ch(1))
			b, err2 := w.c.IsMember(bg, community, user, ch(2))
			if err1 != nil || err2 != nil {
				s.Failf("check: %v %v", err1, err2)
			}
			probes = append(probes, probe{s.Elapsed(), a, b, w.loads()})
		}
		look() // t=0 → returns at 2.3 s
		info, _ = w.c.Inspect(community, user)
		_ = s.Sleep(bg, 3*time.Second-s.Elapsed())
		w.revoke(1) // the invalidations are lost
		w.grant(2)
		for _, at := range []time.Duration{5 * time.Second, poolWait + 10*time.Second - 1} {
			_ = s.Sleep(bg, at-s.Elapsed())
			look()
		}
		// Now exactly checkout + 10 s: expired, read again (the new load
		// itself waits for the pool and the query).
		_ = s.Sleep(bg, poolWait+10*time.Second-s.Elapsed())
		look()
	})
	assert.Equal(t, checkout, info.CheckedOutAt)
	assert.Equal(t, checkout.Add(10*time.Second), info.ExpiresAt, "fresh until checkout + 10 s, not load end + 10 s")
	require.Len(t, probes, 4)
	assert.Equal(t, poolWait+query, probes[0].at)
	assert.Equal(t, probe{poolWait + query, true, false, 1}, probes[0])
	assert.Equal(t, probe{5 * time.Second, true, false, 1}, probes[1], "within the window the lost invalidation shows (MS-2, MS-10)")
	assert.Equal(t, probe{poolWait + 10*time.Second - 1, true, false, 1}, probes[2], "the last instant of the window")
	assert.Equal(t, probe{2*poolWait + 10*time.Second + query, false, true, 2}, probes[3], "at checkout + 10 s the entry has expired")
}

// MS-2: a marker's freshness counts from checkout too, and a loader whose
// result is already expired when it publishes leaves nothing that answers.
func TestMarkerFreshnessAndSlowLoad(t *testing.T) {
	var w *world
	var fresh, stale membership.EntryInfo
	var freshOK bool
	simRun(t, 4, func(s *sim.Sim) {
		w = newWorld(t, s, 5, func(int) bool { return true }, membership.Config{MaxSnapshotIDs: 4, Freshness: time.Second}, nil)
		_, _ = w.c.IsMember(bg, community, user, ch(1))
		fresh, freshOK = w.c.Inspect(community, user)
		_ = s.Sleep(bg, time.Second)
		stale, _ = w.c.Inspect(community, user)
		_, _ = w.c.IsMember(bg, community, user, ch(1))
		// A load slower than Freshness publishes an entry that no longer
		// answers: the next check loads again.
		latency(w.db, authztest.StmtActiveMemberships, 2*time.Second)
		w.c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
		_, _ = w.c.IsMember(bg, community, user, ch(1))
		_, _ = w.c.IsMember(bg, community, user, ch(1))
	})
	require.True(t, freshOK)
	assert.Equal(t, membership.PointChecks, fresh.Kind)
	assert.True(t, fresh.Fresh)
	assert.Equal(t, sim.Epoch.Add(time.Second), fresh.ExpiresAt)
	assert.False(t, stale.Fresh, "a marker expires at checkout + Freshness")
	assert.Equal(t, int64(4), w.loads(), "expired marker and too-slow loads are read again")
}

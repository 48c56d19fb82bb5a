package accesschannels_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The package under real goroutines (run with -race): readers, writers and
// invalidations concurrently on rt.Real(). Every answer is sorted, free of
// duplicates and of other communities' channels; counters add up; and once
// writes stop and a final invalidation is applied, cached answers equal the
// uncached ones (OC-1, OC-9, OC-10).
func TestStressRealRuntime(t *testing.T) {
	r := rt.Real()
	db := authztest.New(r)
	p := authztest.NewLocked(r, db)
	communities := []authz.ID{k1, k2}
	owner := map[authz.ID]authz.ID{}
	for i := uint64(1); i <= 40; i++ {
		k := communities[i%2]
		owner[ch(i)] = k
		require.NoError(t, db.AddChannel(authztest.Channel{ID: ch(i), Community: k, Open: i%3 != 0, Listed: i%4 != 0}))
	}
	c, err := accesschannels.New(r, p, accesschannels.Config{MemberCapacity: 16})
	require.NoError(t, err)

	const readers, writers, lookupsEach = 8, 2, 400
	var bad []string
	badMu := r.NewMutex("bad")
	report := func(format string, a ...any) {
		badMu.Lock()
		defer badMu.Unlock()
		bad = append(bad, fmt.Sprintf(format, a...))
	}
	wg := r.NewWaitGroup("stress")
	wg.Add(readers + writers)
	for w := range writers {
		r.Go("writer", func() {
			defer wg.Done()
			for i := range 300 {
				n := uint64((i*7+w*13)%40 + 1)
				u := user(uint64(i%20 + 1))
				k := owner[ch(n)]
				switch i % 3 {
				case 0:
					p.Write(func(db *authztest.DB) { _ = db.SetMember(u, ch(n), i%2 == 0) })
					c.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: k, UserID: u, ChannelID: ch(n)})
				case 1:
					p.Write(func(db *authztest.DB) {
						_ = db.UpdateChannel(ch(n), func(x *authztest.Channel) { x.Open = !x.Open })
					})
					c.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: k, ChannelID: ch(n)})
				case 2:
					c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k})
				}
				r.Yield()
			}
		})
	}
	for i := range readers {
		r.Go("reader", func() {
			defer wg.Done()
			for j := range lookupsEach {
				k := communities[(i+j)%2]
				u := user(uint64((i*31+j)%20 + 1))
				ids, err := c.Accessible(context.Background(), k, u)
				if err != nil {
					report("Accessible: %v", err)
					return
				}
				if !slices.IsSortedFunc(ids, authz.Compare) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
					report("not sorted and unique: %v", ids)
				}
				for _, id := range ids {
					if owner[id] != k {
						report("OC-10: %v of %v granted in %v", id, owner[id], k)
					}
				}
				if _, err := c.Granted(context.Background(), k, u, ch(uint64(j%40+1))); err != nil {
					report("Granted: %v", err)
				}
			}
		})
	}
	require.NoError(t, wg.Wait(context.Background()))
	assert.Empty(t, bad)

	st := c.Stats()
	const lookups = readers * lookupsEach * 2
	assert.Equal(t, int64(lookups), st.MemberHits+st.MemberMisses)
	assert.Equal(t, int64(lookups), st.OpenHits+st.OpenMissesAbsent+st.OpenMissesExpired)

	for _, k := range communities {
		c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k})
		for u := uint64(1); u <= 21; u++ {
			got, err := c.Accessible(context.Background(), k, user(u))
			require.NoError(t, err)
			want, err := c.AccessibleUncached(context.Background(), k, user(u))
			require.NoError(t, err)
			assert.Equal(t, want, got, "community %v user %d", k, u)
		}
	}
}

package oc

import (
	"context"
	"testing"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestOC9_CapacityHeldExactly fills each half of the cache to exactly its
// configured capacity (MemberCapacity member halves, CommunityCapacity open
// halves: LRU beyond it, not at it) and reads everything again, in
// reverse: every second read must be a hit, counted under the seed's series, and one more
// entry must evict exactly one. The workloads of the other checks never
// stop at the capacity, so a cache that evicted at it passed them.
func TestOC9_CapacityHeldExactly(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, 2, 5} {
		for _, half := range []string{"member", "open"} {
			r := rt.Real()
			db := authztest.New(r)
			community := func(i int) authz.ID { return authz.NewID('k', uint64(i)) }
			reader := func(i int) authz.ID { return authz.NewID('u', uint64(i)) }
			for i := 1; i <= n+1; i++ {
				if err := db.AddChannel(authztest.Channel{ID: authz.NewID('c', uint64(i)), Community: community(i), Open: true, Listed: true}); err != nil {
					t.Fatal(err)
				}
			}
			cfg := accesschannels.Config{MemberCapacity: n}
			hits, misses := accesschannels.MetricMemberHits, accesschannels.MetricMemberMisses
			key := func(i int) (authz.ID, authz.ID) { return community(1), reader(i) }
			if half == "open" {
				cfg = accesschannels.Config{CommunityCapacity: n}
				hits, misses = accesschannels.MetricOpenHits, accesschannels.MetricOpenMisses+`{reason="absent"}`
				key = func(i int) (authz.ID, authz.ID) { return community(i), reader(1) }
			}
			cache, err := accesschannels.New(r, authztest.NewLocked(r, db), cfg)
			if err != nil {
				t.Fatal(err)
			}
			read := func(i int) {
				c, u := key(i)
				if _, err := cache.Accessible(ctx, c, u); err != nil {
					t.Fatalf("OC-9: Accessible: %v", err)
				}
			}
			counts := func() (int64, int64) {
				sc, err := checks.Scrape(cache.Metrics())
				if err != nil {
					t.Fatalf("OC-9: %v", err)
				}
				return sc.Values[hits], sc.Values[misses]
			}
			for round := range 2 {
				for j := 1; j <= n; j++ {
					i := j
					if round == 1 { // the second round in reverse: the least recently used is now the last filled
						i = n + 1 - j
					}
					read(i)
				}
				if h, m := counts(); h != int64(round*n) || m != int64(n) {
					t.Fatalf("OC-9: %s half of capacity %d, filled to it, read round %d: %s %d and %s %d, want %d and %d", half, n, round+1, hits, h, misses, m, round*n, n)
				}
			}
			// One more evicts the least recently used (n), and only it: a
			// cache that evicted the oldest entry instead would miss on 1
			// and then on every entry after it.
			read(n + 1)
			for i := 1; i < n; i++ {
				read(i)
			}
			read(n)
			if h, m := counts(); h != int64(2*n-1) || m != int64(n+2) {
				t.Errorf("OC-9: %s half of capacity %d, one entry past it: %s %d and %s %d, want %d and %d (one eviction, the least recently used)", half, n, hits, h, misses, m, 2*n-1, n+2)
			}
		}
	}
}

package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// MS-4 on PostgreSQL: the seed's signed membership probes at 4,097, 16,384
// and 16,385 memberships. The memberships are bulk-loaded with COPY and the
// planner statistics refreshed with ANALYZE, the fix the seed needed after
// its boundary test met a quadratic join without statistics. Every channel
// is answered correctly: up to 16,384 from one snapshot after one read,
// above it through point checks behind a PointChecks marker, each counted
// as an oversize fallback.
func TestMembershipBoundaryProbes(t *testing.T) {
	f := pgtest.New(t)
	var g ids
	for _, n := range []int{4097, 16384, 16385} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := ctxT(t)
			community, other, user := g.id('k'), g.id('k'), g.id('u')
			// n member channels, plus a channel the user never joined, one
			// it left, one that was deleted, and one in another community.
			var rows []authztest.Channel
			var members []authz.ID
			for range n {
				id := g.id('c')
				members = append(members, id)
				rows = append(rows, authztest.Channel{ID: id, Community: community, Listed: true})
			}
			never, left, deleted, elsewhere := g.id('c'), g.id('c'), g.id('c'), g.id('c')
			rows = append(rows,
				authztest.Channel{ID: never, Community: community},
				authztest.Channel{ID: left, Community: community},
				authztest.Channel{ID: deleted, Community: community, Deleted: true},
				authztest.Channel{ID: elsewhere, Community: other})
			seedStart := time.Now()
			f.AddChannels(rows...)
			f.AddMembers(user, members)
			f.AddMembers(user, []authz.ID{deleted, elsewhere})
			f.SetMember(user, left, false)
			// The seed's lesson: freshly loaded tables have no statistics.
			// The planner then estimates one row on each side and may join
			// 16,384 memberships by a nested loop that re-scans the
			// community's channels per membership, which takes seconds.
			// ANALYZE turns it into a hash join.
			t.Logf("plan before ANALYZE: %s", explain(t, f, community, user))
			f.Analyze()
			plan := explain(t, f, community, user)
			t.Logf("plan after ANALYZE: %s", plan)
			assert.NotContains(t, plan, "Join Filter", "after ANALYZE the membership join must not filter a nested loop")
			t.Logf("seeded %d channels and %d memberships with unnest+COPY, then ANALYZE, in %v",
				len(rows), n+3, time.Since(seedStart).Round(time.Millisecond))

			store := f.Open(pgstore.Config{})
			// The production query at this size. Its time is logged to
			// compare with the seed's (docs/design-notes-2026-12.md).
			conn, err := store.Acquire(ctx)
			require.NoError(t, err)
			qStart := time.Now()
			got, err := conn.ActiveMemberships(ctx, community, user, membership.DefaultMaxSnapshotIDs+1)
			qTime := time.Since(qStart)
			conn.Release()
			require.NoError(t, err)
			require.Len(t, got, min(n, membership.DefaultMaxSnapshotIDs+1), "LIMIT 16,385")
			t.Logf("active_memberships LIMIT 16385 returned %d rows in %v", len(got), qTime.Round(time.Microsecond))

			cache, err := membership.New(rt.Real(), store, membership.Config{})
			require.NoError(t, err)
			before := store.Metrics().Snapshot()

			// The loader first, alone, so the load count is exact; then
			// every other channel from 4 goroutines (point checks above
			// the cap are one round trip each).
			probes := append(append([]authz.ID{}, members...), never, left, deleted, elsewhere)
			want := func(i int) bool { return i < n }
			ok, err := cache.IsMember(ctx, community, user, probes[0])
			require.NoError(t, err)
			require.True(t, ok)
			var mu sync.Mutex
			var wrong []int
			var wg sync.WaitGroup
			const workers = 4
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 1 + w; i < len(probes); i += workers {
						ok, err := cache.IsMember(ctx, community, user, probes[i])
						if err != nil || ok != want(i) {
							mu.Lock()
							wrong = append(wrong, i)
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			assert.Empty(t, wrong, "probes answered wrongly (indexes; >= %d are non-member channels)", n)

			after := store.Metrics().Snapshot()
			stmts := func(s string) int64 {
				k := fmt.Sprintf(`%s{statement="%s"}`, pgstore.MetricStatements, s)
				return after[k] - before[k]
			}
			m := cache.Metrics().Snapshot()
			info, found := cache.Inspect(community, user)
			require.True(t, found)
			assert.Equal(t, int64(1), stmts(pgstore.StmtActiveMemberships), "one membership read")
			assert.Equal(t, int64(1), m[membership.MetricMisses])
			oversize := m[fmt.Sprintf(`%s{reason="%s"}`, membership.MetricFallbacks, membership.ReasonOversize)]
			if n <= membership.DefaultMaxSnapshotIDs {
				assert.Equal(t, membership.Snapshot, info.Kind)
				assert.Equal(t, n, info.IDs)
				assert.Equal(t, int64(len(probes)-1), m[membership.MetricHits], "every check but the loader's is a hit")
				assert.Zero(t, stmts(pgstore.StmtIsActiveMember))
				assert.Zero(t, oversize)
			} else {
				assert.Equal(t, membership.PointChecks, info.Kind, "above 16,384 a marker, not a partial list")
				assert.Zero(t, info.IDs)
				assert.Zero(t, m[membership.MetricHits])
				assert.Equal(t, int64(len(probes)), stmts(pgstore.StmtIsActiveMember), "every check asks the database")
				assert.Equal(t, int64(len(probes)), oversize)
			}
			t.Logf("%d memberships: entry %v with %d IDs; %d point checks; %d oversize fallbacks",
				n, info.Kind, info.IDs, stmts(pgstore.StmtIsActiveMember), oversize)
		})
	}
}

// explain returns the first lines of the plan of the full-set load, one
// line, without running the query.
func explain(t *testing.T, f *pgtest.Fixture, community, user authz.ID) string {
	t.Helper()
	sql, ok := pgstore.Query(pgstore.StmtActiveMemberships)
	require.True(t, ok)
	rows, err := f.Conn().Query(ctxT(t), "EXPLAIN "+sql, pgtest.UUID(community), pgtest.UUID(user), membership.DefaultMaxSnapshotIDs+1)
	require.NoError(t, err)
	var lines []string
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		lines = append(lines, strings.TrimSpace(line))
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, " | ")
}

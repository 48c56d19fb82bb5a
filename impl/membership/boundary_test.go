package membership_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// MS-4: boundary probes at 4,097, 16,384 and 16,385 memberships. Every
// channel of the community (the user's and three others) is answered
// correctly; up to 16,384 from one snapshot, above it through point checks
// behind a PointChecks marker, each counted as an oversize fallback. The
// user's channels are interleaved with others in a shuffled insertion order,
// so the database's order is not the sort order.
func TestBoundaryProbes(t *testing.T) {
	for _, n := range []int{4097, 16384, 16385} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var wrong []int
			var w *world
			var info membership.EntryInfo
			simRun(t, uint64(n), func(s *sim.Sim) {
				// Channels 1..n+3; the user is a member of all but three,
				// spread over the range.
				others := map[int]bool{1: true, n/2 + 1: true, n + 3: true}
				w = newWorld(t, s, n+3, func(i int) bool { return !others[i] }, membership.Config{}, nil)
				order := s.Rand().Perm(n + 3)
				for _, j := range order {
					i := j + 1
					ok, err := w.c.IsMember(bg, community, user, ch(i))
					if err != nil || ok == others[i] {
						wrong = append(wrong, i)
					}
				}
				info, _ = w.c.Inspect(community, user)
			})
			assert.Empty(t, wrong, "channels answered wrongly")
			assert.Equal(t, int64(1), w.loads(), "one membership read")
			assert.Equal(t, int64(1), w.misses())
			if n <= membership.DefaultMaxSnapshotIDs {
				assert.Equal(t, membership.Snapshot, info.Kind)
				assert.Equal(t, n, info.IDs)
				assert.Equal(t, int64(n+2), w.hits(), "every check but the loader's is a hit")
				assert.Zero(t, w.points())
				assert.Zero(t, w.fallbacks(membership.ReasonOversize))
				assert.Equal(t, int64(1), w.db.Stats().Checkouts)
			} else {
				assert.Equal(t, membership.PointChecks, info.Kind, "above 16,384 a marker, not a partial list")
				assert.Zero(t, info.IDs, "the marker stores no decision")
				assert.Zero(t, w.hits())
				assert.Equal(t, int64(n+3), w.points(), "every check asks the database")
				assert.Equal(t, int64(n+3), w.fallbacks(membership.ReasonOversize))
				assert.Equal(t, int64(16385), w.db.Stats().Rows-int64(n), "the loader fetched 16,385 IDs (plus one row per granted point check)")
			}
		})
	}
}

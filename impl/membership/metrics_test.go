package membership_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// The seed's metric names and labels, with values equal to the events of a
// scripted run: two users, one below and one above the cap.
func TestCountersMatchEvents(t *testing.T) {
	var w *world
	simRun(t, 1, func(s *sim.Sim) {
		w = newWorld(t, s, 4, func(int) bool { return true }, membership.Config{MaxSnapshotIDs: 3}, nil)
		for i := 1; i <= 4; i++ { // oversize: 1 load, 4 point checks
			_, _ = w.c.IsMember(bg, community, user, ch(i))
		}
		other := userN(2)
		_ = w.db.SetMember(other, ch(1), true)
		for i := 1; i <= 4; i++ { // snapshot: 1 load, 3 hits
			_, _ = w.c.IsMember(bg, community, other, ch(i))
		}
	})
	assert.Equal(t, map[string]int64{
		"membership_cache_hits_total":                             3,
		"membership_cache_misses_total":                           2,
		`membership_cache_fallbacks_total{reason="oversize"}`:     4,
		`membership_cache_fallbacks_total{reason="wait_timeout"}`: 0,
		// MS-12's subscription confirmations: none in this run.
		"membership_cache_subscription_confirms_total":          0,
		"membership_cache_subscription_confirmed_members_total": 0,
	}, w.c.Metrics().Snapshot())
	var b strings.Builder
	require.NoError(t, w.c.Metrics().WriteText(&b))
	assert.Contains(t, b.String(), "# TYPE membership_cache_hits_total counter\nmembership_cache_hits_total 3\n")
	assert.Contains(t, b.String(), `membership_cache_fallbacks_total{reason="oversize"} 4`)
}

package membership_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// trueWeight recomputes the estimated weight of what the cache retains from
// the counts it reports, independently of the weigher it uses.
func trueWeight(u membership.Usage) int64 {
	return int64(u.Entries)*membership.EntryOverheadBytes + int64(u.Loading)*membership.LoadingLockBytes + u.IDs*authz.IDSize
}

// MS-8: users of adversarial sizes (empty, one, exactly the cap, one above
// the cap, anything between) fill a small budget. After every check the
// retained weight, recomputed from the retained IDs and entries, is within
// the budget, and every entry kind weighs something.
func TestWeightStaysWithinBudget(t *testing.T) {
	const maxIDs = 64
	rapid.Check(t, func(pt *rapid.T) {
		budget := rapid.Int64Range(membership.EntryWeight(membership.Snapshot, maxIDs), 8*membership.EntryWeight(membership.Snapshot, maxIDs)).Draw(pt, "budget")
		sizes := rapid.SliceOfN(rapid.SampledFrom([]int{0, 1, maxIDs - 1, maxIDs, maxIDs + 1, 7, 33}), 1, 60).Draw(pt, "sizes")
		var violations []string
		var final membership.Usage
		res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
			db := authztest.New(s)
			for i := 1; i <= maxIDs+1; i++ {
				_ = db.AddChannel(authztest.Channel{ID: ch(i), Community: community})
			}
			for u, n := range sizes {
				for i := 1; i <= n; i++ {
					_ = db.SetMember(authz.NewID('u', uint64(u+1)), ch(i), true)
				}
			}
			c, err := membership.New(s, db, membership.Config{MaxSnapshotIDs: maxIDs, BudgetBytes: budget})
			if err != nil {
				s.Failf("New: %v", err)
				return
			}
			for u, n := range sizes {
				ok, err := c.IsMember(bg, community, authz.NewID('u', uint64(u+1)), ch(1))
				if err != nil || ok != (n >= 1) {
					violations = append(violations, fmt.Sprintf("user %d: %v %v", u, ok, err))
				}
				us := c.Usage()
				if us.WeightBytes > budget || trueWeight(us) > budget {
					violations = append(violations, fmt.Sprintf("after user %d: weight %d, recomputed %d > budget %d", u, us.WeightBytes, trueWeight(us), budget))
				}
				if us.WeightBytes != trueWeight(us) {
					violations = append(violations, fmt.Sprintf("after user %d: weigher says %d, entries weigh %d", u, us.WeightBytes, trueWeight(us)))
				}
			}
			final = c.Usage()
		})
		require.NoError(pt, res.Err)
		require.Empty(pt, violations)
		if len(sizes)*membership.EntryOverheadBytes > int(budget) {
			require.Positive(pt, final.Evictions, "entries weigh something, so enough of them must evict")
		}
	})
}

// MS-8: the default budget and a maximum-size snapshot.
func TestMaximumSnapshotWeighs256KiBPlusOverhead(t *testing.T) {
	var u membership.Usage
	simRun(t, 1, func(s *sim.Sim) {
		w := newWorld(t, s, 16384, func(int) bool { return true }, membership.Config{}, nil)
		_, _ = w.c.IsMember(bg, community, user, ch(1))
		u = w.c.Usage()
	})
	assert.Equal(t, membership.Usage{Entries: 1, Snapshots: 1, IDs: 16384, WeightBytes: 256<<10 + membership.EntryOverheadBytes, BudgetBytes: 64 << 20}, u)
}

// MS-8: empty snapshots, markers and loading entries are counted, and
// Maintain drops expired entries.
func TestEmptyEntriesWeighAndMaintainExpires(t *testing.T) {
	var before, loading, after membership.Usage
	var removed int
	simRun(t, 1, func(s *sim.Sim) {
		w := newWorld(t, s, 3, func(int) bool { return true }, membership.Config{MaxSnapshotIDs: 2}, nil)
		latency(w.db, authztest.StmtActiveMemberships, 0)
		_, _ = w.c.IsMember(bg, community, user, ch(1))                // marker: 3 > 2
		_, _ = w.c.IsMember(bg, community, authz.NewID('u', 9), ch(1)) // empty snapshot
		_, _ = w.c.IsMember(bg, authz.NewID('k', 9), user, ch(1))      // empty snapshot
		before = w.c.Usage()
		latency(w.db, authztest.StmtActiveMemberships, 30e9)
		s.Go("slow", func() { _, _ = w.c.IsMember(bg, community, authz.NewID('u', 8), ch(1)) })
		_ = s.Sleep(bg, 1)
		loading = w.c.Usage()
		_ = s.Sleep(bg, 10e9)
		removed = w.c.Maintain()
		after = w.c.Usage()
	})
	assert.Equal(t, membership.Usage{Entries: 3, Snapshots: 2, Markers: 1, WeightBytes: 3 * membership.EntryOverheadBytes, BudgetBytes: before.BudgetBytes}, before)
	assert.Equal(t, 1, loading.Loading)
	assert.Equal(t, before.WeightBytes+membership.EntryOverheadBytes+membership.LoadingLockBytes, loading.WeightBytes)
	assert.Equal(t, 4, removed, "every entry, the stuck loading one included, expires")
	assert.Zero(t, after.Entries)
	assert.Zero(t, after.WeightBytes)
}

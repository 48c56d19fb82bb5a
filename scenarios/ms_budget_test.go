package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// msRetainedWeight is the cache's retained weight computed from what it
// holds, independently of its weigher, with the documented estimate (MS-8):
// EntryOverheadBytes for every entry, empty snapshots and markers included,
// 16 bytes per stored ID, and LoadingLockBytes more for a loading entry.
func msRetainedWeight(u membership.Usage) int64 {
	return int64(u.Entries)*membership.EntryOverheadBytes + u.IDs*authz.IDSize + int64(u.Loading)*membership.LoadingLockBytes
}

// msBudgetViolation says what is wrong with a cache's usage after
// maintenance, or "" if nothing: the independently computed weight must
// stay within the budget, and the weigher's own total must equal it (a
// weigher that under-counts, e.g. gives empty entries or markers zero
// weight or ignores the IDs, keeps more than the budget allows).
func msBudgetViolation(u membership.Usage) string {
	w := msRetainedWeight(u)
	switch {
	case w > u.BudgetBytes:
		return fmt.Sprintf("retained weight %d bytes (%d entries, %d IDs, %d loading) exceeds the budget of %d", w, u.Entries, u.IDs, u.Loading, u.BudgetBytes)
	case u.WeightBytes != w:
		return fmt.Sprintf("the cache weighs its %d entries (%d IDs, %d loading) at %d bytes; the documented estimate is %d", u.Entries, u.IDs, u.Loading, u.WeightBytes, w)
	}
	return ""
}

// The budget check must be able to fail.
func TestMS8_BudgetCheckReportsViolations(t *testing.T) {
	ok := membership.Usage{Entries: 2, Snapshots: 1, Markers: 1, IDs: 10, WeightBytes: 2*256 + 160, BudgetBytes: 1000}
	assert.Empty(t, msBudgetViolation(ok))
	over := ok
	over.BudgetBytes = 600
	assert.Contains(t, msBudgetViolation(over), "exceeds the budget")
	ignoresPayload := ok
	ignoresPayload.WeightBytes = 2 * 256
	assert.Contains(t, msBudgetViolation(ignoresPayload), "documented estimate")
	emptyIsFree := ok
	emptyIsFree.WeightBytes = 256 + 160
	assert.Contains(t, msBudgetViolation(emptyIsFree), "documented estimate")
}

// TestMS8_WeightedBudget checks MS-8: the estimated retained weight stays
// within the budget, with nonzero weight for empty entries and markers, and
// a maximum-size list weighs 16 bytes per ID plus overhead. The pod runs
// with a small cap (MaxSnapshotIDs 64) and a budget of 1–6 maximum-size
// snapshots, so eviction is constant; users have adversarial sizes: none,
// one, the cap minus one, the cap, the cap plus one (a marker), and random.
// Six clients check random users' channels for 30 s (expiry also runs);
// every 0–2 s a monitor runs Maintain and compares the weight computed
// from Usage (not from the cache's weigher) with the budget. Every answer
// must match the tables: eviction may cost reads, never correctness.
func TestMS8_WeightedBudget(t *testing.T) {
	const capIDs, nUsers, nChannels = 64, 48, 72
	type seedFigures struct {
		samples, evictions int64
		worst              claims.Max // retained weight / budget
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 10}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		sizes := []int{0, 0, 1, capIDs - 1, capIDs, capIDs + 1, capIDs + 1}
		members := make([][]int, nUsers)
		for u := range members {
			n := sizes[u%len(sizes)]
			if u >= 2*len(sizes) {
				n = r.IntN(capIDs + 8)
			}
			for _, c := range r.Perm(nChannels)[:n] {
				members[u] = append(members[u], c+1)
			}
		}
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		maxSnapshot := int64(membership.EntryOverheadBytes + capIDs*authz.IDSize)
		budget := maxSnapshot*int64(1+r.IntN(6)) + r.Int64N(maxSnapshot)
		cfg := membership.Config{MaxSnapshotIDs: capIDs, BudgetBytes: budget}
		s.Note("membership budget %d bytes, cap %d IDs", budget, capIDs)
		w, err := msOnePod(s, tables, simdb.Config{PoolSize: 4, Latency: simdb.DefaultLatency}, relay.Config{MS: cfg})
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		ctx := context.Background()
		end := s.Elapsed() + 30*time.Second
		var violation string
		var wrong []string
		monitor := func() {
			pod.MS.Maintain()
			u := pod.MS.Usage()
			fig.samples++
			ratio := float64(msRetainedWeight(u)) / float64(u.BudgetBytes)
			fig.worst.Observe(ratio, func() string {
				return fmt.Sprintf("seed %#x at +%v: %d entries (%d snapshots, %d markers, %d loading), %d IDs: %d of %d bytes",
					s.Seed(), s.Elapsed(), u.Entries, u.Snapshots, u.Markers, u.Loading, u.IDs, msRetainedWeight(u), u.BudgetBytes)
			})
			if v := msBudgetViolation(u); v != "" && violation == "" {
				violation = fmt.Sprintf("at +%v: %s", s.Elapsed(), v)
			}
		}
		wg := s.NewWaitGroup("clients")
		wg.Add(7)
		s.Go("monitor", func() {
			defer wg.Done()
			for i := 0; i < 1000 && s.Elapsed() < end; i++ {
				_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(2*time.Second))))
				monitor()
			}
		})
		for c := range 6 {
			s.Go(fmt.Sprintf("client%d", c), func() {
				defer wg.Done()
				for i := 0; i < 10_000 && s.Elapsed() < end; i++ {
					_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(50*time.Millisecond))))
					user, ch := msUser(1+r.IntN(nUsers)), msChannel(1+r.IntN(nChannels))
					got, err := pod.MS.IsMember(ctx, msCommunity, user, ch)
					if want := tables.IsActiveMember(msCommunity, user, ch); err != nil || got != want {
						wrong = append(wrong, fmt.Sprintf("%s/%s: got %v (%v), truth %v", relay.Short(user), relay.Short(ch), got, err, want))
					}
				}
			})
		}
		_ = wg.Wait(ctx)
		monitor()
		fig.evictions = pod.MS.Usage().Evictions
		switch {
		case violation != "":
			return fmt.Errorf("MS-8: budget of %d bytes: %s", budget, violation)
		case len(wrong) > 0:
			return fmt.Errorf("MS-8: %d wrong answers under eviction, e.g. %s", len(wrong), wrong[0])
		case pod.MS.Usage().Evictions == 0:
			return fmt.Errorf("MS-8: nothing was evicted under a budget of %d bytes: the scenario does not exercise the budget", budget)
		}
		// The seed's figure: a maximum-size list is 256 KiB of IDs plus
		// overhead, nonzero for empty entries and markers.
		if got, want := membership.EntryWeight(membership.Snapshot, membership.DefaultMaxSnapshotIDs), int64(256<<10+membership.EntryOverheadBytes); got != want {
			return fmt.Errorf("MS-8: a maximum-size snapshot weighs %d bytes, want 256 KiB + %d = %d", got, membership.EntryOverheadBytes, want)
		}
		for _, k := range []membership.Kind{membership.Snapshot, membership.PointChecks} {
			if membership.EntryWeight(k, 0) <= 0 {
				return fmt.Errorf("MS-8: an empty %v weighs nothing", k)
			}
		}
		return nil
	})
	var samples, evictions int64
	results.Each(func(_ uint64, f *seedFigures) { samples, evictions = samples+f.samples, evictions+f.evictions })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-8", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("max retained weight %.1f%% of the budget over %d samples after maintenance (%d evictions)", 100*worst.Value, samples, evictions),
		Bound:    "≤ 100% of BudgetBytes; weigher = 256 B/entry + 16 B/ID (+128 B loading)", Value: worst.Value, Unit: "fraction of budget",
		Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "one pod, MaxSnapshotIDs 64, budget 1–6 maximum-size snapshots; users with 0, 1, 63, 64, 65 (marker) and random memberships",
	})
}

package ms

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS5_OneReadAtTheSmallestBudget checks MS-5 at the smallest budget
// the cache accepts, found from outside by asking membership.New. The
// loading entry that K requests share lives in the cache like a snapshot;
// a budget that holds the largest snapshot but not a loading entry would
// leave it out, and every concurrent cold check would load on its own.
// Each seed picks MaxSnapshotIDs in 1–16, so both sides of the point where
// a loading entry outweighs the largest snapshot are flown.
func TestMS5_OneReadAtTheSmallestBudget(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-5", Bound: "reads per concurrent cold checks", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			const nChannels = 16
			r := s.Rand()
			maxIDs := 1 + r.IntN(nChannels)
			budget, err := smallestBudget(s, maxIDs)
			if err != nil {
				return smp, fmt.Errorf("MS-5: %w", err)
			}
			var mine []int
			for _, c := range r.Perm(nChannels)[:r.IntN(maxIDs+1)] {
				mine = append(mine, c+1)
			}
			tables, err := tablesOf(nChannels, [][]int{mine})
			if err != nil {
				return smp, err
			}
			lat := simdb.Latency{BaseMin: time.Millisecond, BaseMax: time.Duration(1+r.IntN(1000)) * time.Millisecond}
			cfg := pods.Config{MS: membership.Config{MaxSnapshotIDs: maxIDs, BudgetBytes: budget}}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 1 + r.IntN(4), Latency: lat}, cfg)
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			isMember := map[authz.ID]bool{}
			for _, c := range mine {
				isMember[channel(c)] = true
			}
			k := 2 + r.IntN(63)
			probe := make([]authz.ID, k)
			for i := range probe {
				probe[i] = channel(1 + r.IntN(nChannels))
			}
			// While the user's one load runs, the cache holds its loading
			// entry and nothing else: Usage, asked then, must say so.
			var during membership.Usage
			asked := false
			watcher := s.NewWaitGroup("usage-watcher")
			watcher.Add(1)
			s.Go("usage-watcher", func() {
				defer watcher.Done()
				for range 20_000 { // every 50 µs for a second: the load takes at least 1 ms
					if w.DB.StatementsOf(pods.StmtActiveMemberships) == 1 {
						during, asked = pod.MS.Usage(), true
						return
					}
					_ = s.Sleep(context.Background(), 50*time.Microsecond)
				}
			})
			wrong, made := checkAll(context.Background(), w, pod, k, user(1), probe, func(c authz.ID) bool { return isMember[c] })
			_ = watcher.Wait(context.Background())
			d, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-5: %w", err)
			}
			active := int64(min(made, 1))
			smp.Observe(float64(d.loads), func() string {
				return fmt.Sprintf("K=%d concurrent cold checks of a user in %d channels, MaxSnapshotIDs %d, BudgetBytes %d (the smallest accepted): %s",
					k, len(mine), maxIDs, budget, d)
			})
			smp.Of = int64(made)
			switch {
			case len(wrong) > 0:
				return smp, fmt.Errorf("MS-5: %d wrong answers, e.g. %s", len(wrong), wrong[0])
			case d.loads != active*b.Int() || d.points != 0 || d.checkouts != active:
				return smp, fmt.Errorf("MS-5: at BudgetBytes %d, the smallest accepted with MaxSnapshotIDs %d, K=%d concurrent cold checks caused %s; want exactly %d load on %d checkout, no point check",
					budget, maxIDs, made, d, active, active)
			case made > 0 && !asked:
				return smp, fmt.Errorf("MS-5: the watcher never saw the one load in flight, so Usage was not asked during it")
			case made > 0 && (during.Entries != 1 || during.Loading != 1 || during.Snapshots != 0 || during.Markers != 0):
				return smp, fmt.Errorf("MS-5: while the one load ran, Usage said %d entries: %d loading, %d snapshots, %d markers; want the one loading entry", during.Entries, during.Loading, during.Snapshots, during.Markers)
			case d.misses != active || d.hits != int64(made)-active:
				return smp, fmt.Errorf("MS-5: at BudgetBytes %d the cache counted %s for %d requests; want %d miss and %d hits", budget, d, made, active, int64(made)-active)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s membership reads per user over %d concurrent cold requests at the smallest budget the cache accepts", o.WorstText(), o.Of)
		},
		Note: "one user, MaxSnapshotIDs 1–16, BudgetBytes the least membership.New accepts, pool of 1–4, loads of up to 1 s",
	})
}

// smallestBudget is the least BudgetBytes membership.New accepts with
// maxIDs, found by bisection: acceptance is monotone in the budget.
func smallestBudget(s *sim.Sim, maxIDs int) (int64, error) {
	accepts := func(budget int64) bool {
		_, err := membership.New(s, authztest.New(s), membership.Config{MaxSnapshotIDs: maxIDs, BudgetBytes: budget})
		return err == nil
	}
	lo, hi := int64(1), int64(64<<20) // MS-8's 64 MiB budget holds any legal setting
	if !accepts(hi) {
		return 0, fmt.Errorf("membership.New refuses MaxSnapshotIDs %d even at BudgetBytes %d", maxIDs, hi)
	}
	for range 64 { // bisection over an int64 ends well within 64 rounds
		if lo >= hi {
			return hi, nil
		}
		mid := lo + (hi-lo)/2
		if accepts(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return 0, fmt.Errorf("bisection of BudgetBytes did not end")
}

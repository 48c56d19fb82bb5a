package ms

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS8_MaintainRemovesExactlyTheExpired checks the maintenance MS-8's
// budget relies on: Maintain removes every snapshot whose freshness bound
// (the claims table's, counted from the load's checkout) has passed, keeps
// every other, and returns how many it removed. Users are loaded at seeded
// instants on a pod whose database answers instantly, so each load's
// checkout is known from outside; maintenance then runs at a load's expiry
// instant exactly (the boundary: expired when the bound is reached) or at a
// seeded one. Its count, a second Maintain's zero and the entries Usage
// still reports are compared with the harness's own count.
func TestMS8_MaintainRemovesExactlyTheExpired(t *testing.T) {
	fresh := claims.Get("MS-2", "freshness").Duration()
	const users = 24
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-8", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true}
			r := s.Rand()
			members := make([][]int, users)
			for u := range members {
				members[u] = []int{1}
			}
			tables, err := tablesOf(1, members)
			if err != nil {
				return smp, err
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 4}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			loaded := make([]time.Duration, users)
			for u := range users {
				start := s.Elapsed()
				if _, err := pod.MS.IsMember(ctx, community, user(u+1), channel(1)); err != nil {
					return smp, err
				}
				if end := s.Elapsed(); end != start {
					return smp, fmt.Errorf("harness: a load took %v on a database that answers instantly", end-start)
				}
				loaded[u] = start
				_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(fresh/users))))
			}
			at := loaded[r.IntN(users)] + fresh // a load's own expiry instant
			if r.IntN(3) == 0 {
				at = s.Elapsed() + time.Duration(r.Int64N(int64(fresh)))
			}
			if at > s.Elapsed() {
				_ = s.Sleep(ctx, at-s.Elapsed())
			}
			now := s.Elapsed()
			want := 0
			for _, l := range loaded {
				if l+fresh <= now {
					want++
				}
			}
			got := pod.MS.Maintain()
			again := pod.MS.Maintain()
			left := pod.MS.Usage().Entries
			what := fmt.Sprintf("Maintain at +%v removed %d of %d snapshots, %d of them past the %v bound; then %d, and %d entries left", now, got, users, want, fresh, again, left)
			smp.Of++
			off := max(got-want, want-got) + again + max(left-(users-want), users-want-left)
			smp.Observe(float64(off), func() string { return what })
			if off != 0 {
				smp.Wrongly(func() string { return what })
				return smp, fmt.Errorf("MS-8: %s (want %d removed, then 0, and %d left)", what, want, users-want)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("Maintain removed exactly the snapshots past the freshness bound over %d seeds: %d wrong, %d failed", o.Seeds, o.Wrong, o.Failed)
		},
	})
}

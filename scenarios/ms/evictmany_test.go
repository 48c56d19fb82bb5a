package ms

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS8_OneLoadEvictsMany checks MS-8's budget where equal sizes never
// go: one load that must evict many entries. TestMS8_BudgetAtTheBound loads
// snapshots of one size, so each load evicts at most one; a cache that
// evicted one entry per insert, whatever the new one weighed, passed it.
// Here a pod with a 1 MiB budget is filled with snapshots of 192–320 IDs
// (4 KiB or so each), then one user with a maximum-size list (16,384 IDs,
// 256 KiB) is loaded, and maintenance runs. The snapshots the pod still
// answers from without the database are found from outside (retained),
// and their payload, 16 bytes per ID (the claims table's maximum list over
// its maximum snapshot), is a lower bound of the retained weight: it must
// stay within the budget. The large snapshot must be among them (it was
// loaded last), so the load did evict: about 60 of the smaller ones.
func TestMS8_OneLoadEvictsMany(t *testing.T) {
	const budget = 1 << 20
	maxList := claims.Get("MS-8", "max list payload")
	snapshotIDs := claims.Get("MS-4", "snapshot ids")
	perID := maxList.Int() / snapshotIDs.Int()
	big := int(snapshotIDs.Int())
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-8", Options: simtest.Options{Seeds: 3},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true}
			r := s.Rand()
			smallIDs := make([]int, 0, 400)
			var smallPayload int64
			for smallPayload < 2*budget { // twice the budget: the cache is full before the big load
				n := 192 + r.IntN(129)
				smallIDs = append(smallIDs, n)
				smallPayload += int64(n) * perID
			}
			members := make([][]int, len(smallIDs)+1)
			for u, n := range smallIDs {
				for c := 1; c <= n; c++ {
					members[u] = append(members[u], c)
				}
			}
			for c := 1; c <= big; c++ {
				members[len(smallIDs)] = append(members[len(smallIDs)], c)
			}
			tables, err := tablesOf(big, members)
			if err != nil {
				return smp, err
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 4}, pods.Config{MS: membership.Config{BudgetBytes: budget}})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			order := make([]authz.ID, len(members)) // most recently loaded first
			payload := make(map[authz.ID]int64, len(members))
			for u := range members {
				if _, err := pod.MS.IsMember(ctx, community, user(u+1), channel(1)); err != nil {
					return smp, err
				}
				order[len(members)-1-u] = user(u + 1)
				payload[user(u+1)] = int64(len(members[u])) * perID
			}
			pod.MS.Maintain()
			n, err := retained(w, pod, order, channel(1))
			if err != nil {
				return smp, fmt.Errorf("MS-8: %w", err)
			}
			var kept int64
			for _, u := range order[:n] {
				kept += payload[u]
			}
			smp.Of++
			smp.Observe(float64(kept), func() string {
				return fmt.Sprintf("after %d snapshots of 192–320 IDs and one of %d, the pod answers %d without the database: %d bytes of IDs under a %d-byte budget", len(smallIDs), big, n, kept, budget)
			})
			switch {
			case n == 0:
				return smp, fmt.Errorf("MS-8: the maximum-size snapshot, loaded last, was not retained under a %d-byte budget", budget)
			case kept > budget:
				smp.Wrongly(func() string { return smp.Witness })
				return smp, fmt.Errorf("MS-8: %s: more than the budget", smp.Witness)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("after one maximum-size load into a 1 MiB cache full of smaller snapshots, the payload retained was at most %.0f bytes (a lower bound of the retained weight); %d of %d seeds over the budget; %d seeds failed",
				o.Worst, o.Wrong, o.Seeds, o.Failed)
		},
	})
}

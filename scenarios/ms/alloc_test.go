package ms

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// TestMS13_HitsAllocateNothing checks MS-13: a check served from a fresh
// snapshot allocates nothing (neither database query is built on a hit),
// at 1 and at 16,384 IDs (the claims table's snapshot cap), with the
// production runtime; and a miss does allocate, so the measurement can see
// an allocation. Allocations are counted by the Go runtime
// (testing.AllocsPerRun), outside the cache, and do not depend on the
// machine.
func TestMS13_HitsAllocateNothing(t *testing.T) {
	capIDs := int(claims.Get("MS-4", "snapshot ids").Int())
	var smp claims.Sample
	var misses []string
	for _, n := range []int{1, capIDs} {
		db := authztest.New(rt.Real())
		for i := 1; i <= n; i++ {
			if err := db.AddChannel(authztest.Channel{ID: channel(i), Community: community}); err != nil {
				t.Fatal(err)
			}
			if err := db.SetMember(user(1), channel(i), true); err != nil {
				t.Fatal(err)
			}
		}
		c, err := membership.New(rt.Real(), db, membership.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if ok, err := c.IsMember(ctx, community, user(1), channel(n)); err != nil || !ok {
			t.Fatalf("warm-up: %v %v", ok, err)
		}
		probe := []authz.ID{channel(1), channel(n), channel(n + 1)} // first, last, absent
		for _, ch := range probe {
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := c.IsMember(ctx, community, user(1), ch); err != nil {
					t.Fatal(err)
				}
			})
			smp.Observe(allocs, func() string {
				return fmt.Sprintf("a hit on a %d-ID snapshot for channel %s allocated %v times per check", n, authzShort(ch), allocs)
			})
		}
		// A miss allocates: the load builds its query and the snapshot.
		r, _ := relay.New(rt.Real(), db, nil, relay.Config{})
		missAllocs := testing.AllocsPerRun(20, func() {
			r.Invalidate(relay.MembershipChanged(community, user(1), channel(1)))
			if _, err := r.MS.IsMember(ctx, community, user(1), channel(1)); err != nil {
				t.Fatal(err)
			}
		})
		if missAllocs == 0 {
			misses = append(misses, fmt.Sprintf("a miss at %d IDs allocated nothing: the measurement cannot see allocations", n))
		}
	}
	verdict := findings.Holds
	if smp.Worst != 0 || len(misses) > 0 {
		verdict = findings.Violated
		t.Errorf("MS-13: worst %v allocations per hit (%s) %v", smp.Worst, smp.Witness, misses)
	}
	b := claims.Get("MS-13", "allocations per hit")
	findings.Report(t, findings.Record{
		ID: "MS-13", Verdict: verdict,
		Measured: fmt.Sprintf("%v allocations per hit at most, over %d hit kinds at 1 and %d IDs (first, last and an absent channel); every miss allocated (%d did not)", smp.Worst, smp.Of, capIDs, len(misses)),
		Bound:    b.String(), BoundName: b.Name, BoundValue: b.Value, Value: smp.Worst, Unit: string(b.Unit), Seeds: 1, Witness: smp.Witness,
		Note: "testing.AllocsPerRun over the production cache on rt.Real(); exact counts, independent of the machine",
	})
}

func authzShort(id authz.ID) string { return fmt.Sprintf("h%d", id[15]) }

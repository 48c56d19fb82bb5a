package oc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/stale"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// memberGrants is a seed's sample of grant-staleness over its member
// reads. The member half's TTL counts from the entry's insertion (as
// Moka's did), so an entry filled by a read that took d is served until
// TTL + d after its snapshot. The seed's limit is the table's TTL plus the
// longest member-half read the world measured (from the acquire to the
// return, outside the cache).
func memberGrants(w *pods.World, b claims.Bound) (claims.Sample, error) {
	fill := time.Duration(w.Store.Reads.Max[pods.StmtMemberChannels])
	limit := b.Duration() + fill
	st, err := w.Staleness(true, limit-time.Nanosecond, pods.Member)
	if err != nil {
		return claims.Sample{}, fmt.Errorf("%s: %w", b.Claim, err)
	}
	smp := stale.Sample(st.ClassReport, w.History.Describe)
	smp.Limit = limit.Seconds()
	if smp.Seen && smp.Worst >= smp.Limit {
		return smp, fmt.Errorf("%s: member grant-staleness %s is not below the %s TTL plus the longest member read (%v): %s",
			b.Claim, b.Format(smp.Worst), b.Format(b.Value), fill, smp.Witness)
	}
	return smp, nil
}

// TestOC7_MemberWindow checks OC-7 on a random workload: grants through
// membership keep the pre-existing 10 s window. With lost membership
// invalidations, a removed member stays granted less than the member
// half's TTL plus the read that filled the entry.
func TestOC7_MemberWindow(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-7", Bound: "member ttl", Options: simtest.Options{Seeds: 20}, Sampled: true,
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, _, err := pods.FlyChurn(s, pods.ChurnOpts{Lossy: true, SlowMemberReads: true})
			if err != nil {
				return claims.Sample{}, err
			}
			return memberGrants(w, b)
		},
		Measured: staleMeasured("grant-staleness of member reads"),
		Note:     "random churn with lost membership invalidations; the limit per seed is the TTL plus that seed's longest member-half read",
	})
}

// TestOC7_RaceToTheBound checks OC-7 where it is hardest: a member's half
// is filled on a pod that never hears the writer, by a read whose snapshot
// the membership's removal follows at once. The entry is inserted when the
// read returns and the same reader probes from inside the window to past
// TTL + the read. The worst grant is just under that, and none at or past
// it. A longer TTL, no TTL, or a comparison that serves at exactly the
// expiry answer a probe past it.
func TestOC7_RaceToTheBound(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-7", Bound: "member ttl", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			ctx := context.Background()
			k, m, p := authz.NewID('k', 1), authz.NewID('m', 1), authz.NewID('p', 1)
			tables := authztest.NewTables()
			if err := tables.AddChannel(authztest.Channel{ID: p, Community: k}); err != nil {
				return claims.Sample{}, err
			}
			if err := tables.SetMember(m, p, true); err != nil {
				return claims.Sample{}, err
			}
			w, err := pods.NewWorld(s, pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency},
				PodFaults: []simbus.Faults{simbus.Reliable(), {LossProb: 1}}}, tables)
			if err != nil {
				return claims.Sample{}, err
			}
			if err := w.Track(pods.Key{Family: pods.OC, Community: k, Subject: m, Channel: p}, pods.Member); err != nil {
				return claims.Sample{}, err
			}
			writer, reader := w.Pods[0], w.Pods[1]
			latency := 50*time.Millisecond + time.Duration(s.Rand().Int64N(int64(900*time.Millisecond)))
			if _, err := w.Race(ctx, pods.Race{
				Statement: pods.StmtMemberChannels, ReadLatency: latency,
				Change: pods.RemoveMember, Community: k, User: m, Channel: p, WritePod: writer,
				Prime: func(ctx context.Context) error {
					_, err := w.Granted(ctx, reader, 1, k, m, p)
					return err
				},
				Offsets: pods.WindowOffsets(b.Duration(), latency), Instant: []string{pods.StmtListedOpenChannels},
				Probe: func(ctx context.Context, i int) error {
					_, err := w.Granted(ctx, reader, 2+i, k, m, p)
					return err
				},
			}); err != nil {
				return claims.Sample{}, err
			}
			return memberGrants(w, b)
		},
		Measured: staleMeasured("grant-staleness of a removed member's reads racing the removal"),
		Note:     "two pods, the reading pod loses every invalidation; the removal commits at the member read's snapshot instant; limit = the TTL + the filling read, measured from outside the cache",
	})
}

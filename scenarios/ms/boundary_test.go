package ms

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// boundaryProbe is one user of the MS-4 boundary probes.
type boundaryProbe struct {
	memberships int
	// sample > 0 probes only that many of the user's channels (plus the
	// last granted): the user above the fetch limit is there to show the
	// limit, not to be probed in full.
	sample int
}

// TestMS4_BoundaryProbes checks MS-4: snapshots hold at most 16,384 IDs,
// the loader fetches at most 16,385, and above 16,384 a PointChecks marker
// is kept that stores no decision, so checks go to the database. As the
// source text's probes did, users with 4,097, 16,384 and 16,385 memberships
// (and one with 16,400, to show the fetch limit) check every channel they
// are in, in a random order with 8 requests in flight, plus channels they
// are not in. Everything is judged from outside the cache, with the
// numbers from the claims table: every answer must match the tables; a
// user within the snapshot cap is answered with no point check after its
// one load, a user above it with a point check for every check (and the
// oversize fallback counted for each); each load fetches min(N, fetch
// limit) rows, counted by the database, and the largest fetch must be the
// fetch limit exactly.
func TestMS4_BoundaryProbes(t *testing.T) {
	snapshotIDs := claims.Get("MS-4", "snapshot ids")
	probes := []boundaryProbe{
		{memberships: 4097},
		{memberships: int(snapshotIDs.Int())},
		{memberships: int(snapshotIDs.Int()) + 1},
		{memberships: int(snapshotIDs.Int()) + 16, sample: 200},
	}
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-4", Bound: "fetch ids", Seeds: 3,
		Fly: func(s *sim.Sim, fetch claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			nChannels := probes[len(probes)-1].memberships + 8 // every probe's channels, plus 8 nobody is in
			members := make([][]int, len(probes))
			for u, p := range probes {
				perm := r.Perm(p.memberships)
				members[u] = make([]int, p.memberships)
				for i, c := range perm {
					members[u][i] = c + 1 // channels 1..memberships, granted in a random order
				}
			}
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 8, Latency: simdb.Latency{BaseMin: 100 * time.Microsecond, BaseMax: time.Millisecond}}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			if err := registered(pod); err != nil {
				return smp, fmt.Errorf("MS-4: %w", err)
			}
			for u, p := range probes {
				usr := user(u + 1)
				var probe []authz.ID
				if p.sample > 0 {
					for _, i := range r.Perm(p.memberships)[:p.sample] {
						probe = append(probe, channel(members[u][i]))
					}
					probe = append(probe, channel(members[u][p.memberships-1]))
				} else {
					for _, c := range members[u] {
						probe = append(probe, channel(c))
					}
				}
				isMember := func(c authz.ID) bool { return tables.IsActiveMember(community, usr, c) }
				for c := p.memberships + 1; c <= nChannels; c++ {
					probe = append(probe, channel(c)) // channels the user is not in
				}
				r.Shuffle(len(probe), func(i, j int) { probe[i], probe[j] = probe[j], probe[i] })
				before := countMS(w, pod)
				rowsBefore := w.DB.RowsOf(pods.StmtActiveMemberships)
				wrong, made := checkAll(context.Background(), w, pod, 8, usr, probe, isMember)
				if made == 0 {
					continue // a shrunk run that checks nothing of this user: no load to judge
				}
				d := countMS(w, pod).sub(before)
				rows := w.DB.RowsOf(pods.StmtActiveMemberships) - rowsBefore
				wantRows := min(int64(p.memberships), fetch.Int())
				desc := fmt.Sprintf("user with %d memberships, %d checks: %s; fetched %d rows", p.memberships, made, d, rows)
				smp.Observe(float64(rows), func() string { return desc })
				oversize := int64(p.memberships) > snapshotIDs.Int()
				switch {
				case len(wrong) > 0:
					return smp, fmt.Errorf("MS-4: user with %d memberships (%s): %d wrong answers of %d, e.g. %s", p.memberships, pods.Short(usr), len(wrong), made, wrong[0])
				case d.loads != 1 || rows != wantRows:
					return smp, fmt.Errorf("MS-4: user with %d memberships (%s): %d loads fetched %d rows; want 1 load of %d rows (the fetch limit is %s): %s",
						p.memberships, pods.Short(usr), d.loads, rows, wantRows, fetch.Format(fetch.Value), desc)
				case oversize && (d.points != int64(made) || d.oversize != int64(made)):
					return smp, fmt.Errorf("MS-4: user above the %s-ID snapshot cap (%s): %d checks gave %s; want every check an oversize point check (a marker that stores no decision)",
						snapshotIDs.Format(snapshotIDs.Value), pods.Short(usr), made, d)
				case !oversize && (d.points != 0 || d.oversize != 0):
					return smp, fmt.Errorf("MS-4: user within the %s-ID snapshot cap (%s): %d checks gave %s; want no point check (one snapshot answers all)",
						snapshotIDs.Format(snapshotIDs.Value), pods.Short(usr), made, d)
				}
			}
			return smp, nil
		},
		Sample: func(r claims.Sample) claims.Sample { return r },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("largest fetch %s rows over %d boundary users (4,097 / 16,384 / 16,385 / 16,400 memberships); answers, snapshot-or-marker and fetch sizes checked per user: %s", o.WorstText(), o.Of, o.SeedsText())
		},
		Note: func(claims.Outcome) string {
			return "one pod, pool of 8, default configuration; grant order random per seed"
		},
	})
}

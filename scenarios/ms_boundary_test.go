package scenarios

import (
	"context"
	"fmt"
	"time"

	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// boundaryProbe is one user of the MS-4 boundary probes.
type boundaryProbe struct {
	memberships int
	// sample > 0 probes only that many of the user's channels (plus the
	// last granted): the user above the fetch limit is there to show the
	// limit, not to be probed in full.
	sample int
	// want is the entry the probes must leave: kind and stored IDs.
	kind membership.Kind
	ids  int
	rows int64 // rows the load must fetch: min(memberships, 16,385)
}

// TestMS4_BoundaryProbes checks MS-4: snapshots hold at most 16,384 IDs, the
// loader fetches at most 16,385, and above 16,384 a PointChecks marker is
// kept that stores no decision, so checks go to the database. As the seed's
// probes did, users with 4,097, 16,384 and 16,385 memberships (and one with
// 16,400, to show the fetch limit) check every channel they are in, in a
// random order with 8 requests in flight, plus channels they are not in.
// Every answer must match the tables; each user must leave the entry stated
// (Inspect: a snapshot of exactly its IDs, or a marker with none); the load
// must fetch min(N, 16,385) rows; and every check of a user above the cap
// is a point check counted as fallbacks{reason="oversize"}.
//
// Memberships are granted in a random order per seed, so the channel a
// 16,384-row fetch would cut off (denying a member) is a different one on
// every seed; the tables are bulk-built before the run.
func TestMS4_BoundaryProbes(t *testing.T) {
	const capIDs = membership.DefaultMaxSnapshotIDs
	probes := []boundaryProbe{
		{memberships: 4097, kind: membership.Snapshot, ids: 4097, rows: 4097},
		{memberships: capIDs, kind: membership.Snapshot, ids: capIDs, rows: capIDs},
		{memberships: capIDs + 1, kind: membership.PointChecks, rows: capIDs + 1},
		{memberships: capIDs + 16, sample: 200, kind: membership.PointChecks, rows: capIDs + 1},
	}
	type seedFigures struct {
		checked, oversize int64
		worst             claims.Max // wrong answers per user
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 3}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		nChannels := capIDs + 16 + 8 // every probe's channels, plus 8 nobody is in
		members := make([][]int, len(probes))
		for u, p := range probes {
			perm := r.Perm(p.memberships)
			members[u] = make([]int, p.memberships)
			for i, c := range perm {
				members[u][i] = c + 1 // channels 1..memberships, granted in a random order
			}
		}
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		w, err := msOnePod(s, tables, simdb.Config{PoolSize: 8, Latency: simdb.Latency{BaseMin: 100 * time.Microsecond, BaseMax: time.Millisecond}}, relay.Config{})
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		for u, p := range probes {
			user := msUser(u + 1)
			var probe []authz.ID
			if p.sample > 0 {
				for _, i := range r.Perm(p.memberships)[:p.sample] {
					probe = append(probe, msChannel(members[u][i]))
				}
				probe = append(probe, msChannel(members[u][p.memberships-1]))
			} else {
				for _, c := range members[u] {
					probe = append(probe, msChannel(c))
				}
			}
			isMember := func(c authz.ID) bool { return tables.IsActiveMember(msCommunity, user, c) }
			for c := p.memberships + 1; c <= nChannels; c++ {
				probe = append(probe, msChannel(c)) // channels the user is not in
			}
			r.Shuffle(len(probe), func(i, j int) { probe[i], probe[j] = probe[j], probe[i] })
			before := countMS(w, pod)
			rowsBefore := w.DB.RowsOf(relay.StmtActiveMemberships)
			wrong := msCheckAll(context.Background(), w, pod, 8, user, probe, isMember)
			d := countMS(w, pod).sub(before)
			rows := w.DB.RowsOf(relay.StmtActiveMemberships) - rowsBefore
			info, ok := pod.MS.Inspect(msCommunity, user)
			fig.checked += int64(len(probe))
			fig.oversize += d.oversize
			desc := fmt.Sprintf("seed %#x: user with %d memberships, %d checks: %s; fetched %d rows; entry %+v", s.Seed(), p.memberships, len(probe), d, rows, info)
			fig.worst.Observe(float64(len(wrong)), func() string { return desc })
			switch {
			case len(wrong) > 0:
				return fmt.Errorf("MS-4: user with %d memberships: %d wrong answers of %d, e.g. %s", p.memberships, len(wrong), len(probe), wrong[0])
			case !ok || !info.Fresh || info.Kind != p.kind || info.IDs != p.ids:
				return fmt.Errorf("MS-4: user with %d memberships left entry %+v (present %v); want a fresh %v with %d IDs", p.memberships, info, ok, p.kind, p.ids)
			case info.IDs > capIDs:
				return fmt.Errorf("MS-4: a snapshot holds %d IDs, above %d", info.IDs, capIDs)
			case d.loads != 1 || rows != p.rows:
				return fmt.Errorf("MS-4: user with %d memberships: %d loads fetched %d rows; want 1 load of %d rows (%s)", p.memberships, d.loads, rows, p.rows, desc)
			case p.kind == membership.PointChecks && (d.oversize != int64(len(probe)) || d.points != int64(len(probe)) || d.hits != 0):
				return fmt.Errorf("MS-4: user above the cap: %d checks gave %s; want every check an oversize point check", len(probe), d)
			case p.kind == membership.Snapshot && (d.oversize != 0 || d.points != 0):
				return fmt.Errorf("MS-4: user within the cap: %d checks gave %s; want no point check", len(probe), d)
			}
		}
		return nil
	})
	var checked, oversize int64
	results.Each(func(_ uint64, f *seedFigures) { checked, oversize = checked+f.checked, oversize+f.oversize })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-4", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("%v wrong answers over %d boundary checks (4,097 / 16,384 / 16,385 / 16,400 memberships); %d oversize point checks, counted", worst.Value, checked, oversize),
		Bound:    "0 wrong; snapshot ≤ 16,384 IDs; marker above; fetch ≤ 16,385 rows", Value: worst.Value, Unit: "wrong answers", Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "one pod, pool of 8, default MaxSnapshotIDs; grant order random per seed",
	})
}

package ms

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
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
}

// TestMS4_BoundaryProbes checks MS-4: snapshots hold at most 16,384 IDs,
// the loader fetches at most 16,385, and above 16,384 a PointChecks marker
// is kept that stores no decision, so checks go to the database. As the
// source text's probes did, users with 4,097, 16,384 and 16,385 memberships
// (and one with 16,400, to show the fetch limit) check every channel they
// are in, in a random order with 8 requests in flight, plus channels they
// are not in. Everything is judged from outside the cache, with the
// numbers from the claims table. Every answer must match the tables. A
// user within the snapshot cap is answered with no point check after its
// one load, a user above it with a point check for every check (and the
// oversize fallback counted for each). Each load fetches min(N, fetch
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
		Claim: "MS-4", Bound: "fetch ids", Options: simtest.Options{Seeds: 3},
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
			w, tables, err := boundaryPod(s, nChannels, members)
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
				before, err := countMS(w, pod)
				if err != nil {
					return smp, fmt.Errorf("MS-4: %w", err)
				}
				rowsBefore := w.DB.RowsOf(pods.StmtActiveMemberships)
				wrong, made := checkAll(context.Background(), w, pod, 8, usr, probe, isMember)
				if made == 0 {
					continue // a shrunk run that checks nothing of this user: no load to judge
				}
				after, err := countMS(w, pod)
				if err != nil {
					return smp, fmt.Errorf("MS-4: %w", err)
				}
				d := after.sub(before)
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
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("largest fetch %s rows over %d boundary users (4,097 / 16,384 / 16,385 / 16,400 memberships); answers, snapshot-or-marker and fetch sizes checked per user: %s", o.WorstText(), o.Of, o.SeedsText())
		},
		Note: "one pod, pool of 8, default configuration; grant order random per seed",
	})
}

// TestMS4_MarkerExpiresWhenUserShrinks checks that MS-4's marker is kept
// only while the user is above the cap: "above 16,384 a PointChecks marker
// is kept", and a marker is an entry like a snapshot, fresh for the
// freshness bound from its load's connection checkout (MS-2). A user with
// 16,385–16,400 memberships is checked (one load, a marker, an oversize
// point check per check). Then it loses memberships down to 16,321–16,384,
// the invalidations of those removals lost (so only expiry can end the
// marker). Once the freshness bound has passed since the marker's load
// returned (its checkout was no later), channels it kept and channels it
// lost are checked with 8 requests in flight. They must be answered by one
// load that fetches the whole list and a snapshot: no point check, no
// oversize fallback, a hit for every check after the one that loaded, and
// every answer the tables'. A marker that outlived the bound would keep the
// user on point checks, each counted oversize, however far below the cap
// the user fell. The cap and the bound come from the claims table.
func TestMS4_MarkerExpiresWhenUserShrinks(t *testing.T) {
	capIDs := int(claims.Get("MS-4", "snapshot ids").Int())
	fresh := claims.Get("MS-2", "freshness").Duration()
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-4", Options: simtest.Options{Seeds: 3},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			above := capIDs + 1 + r.IntN(16)
			below := capIDs - r.IntN(64)
			nChannels := above + 8 // plus 8 the user is never in
			perm := r.Perm(above)
			members := [][]int{make([]int, above)}
			for i, c := range perm {
				members[0][i] = c + 1
			}
			w, _, err := boundaryPod(s, nChannels, members)
			if err != nil {
				return smp, err
			}
			pod, usr, ctx := w.Pods[0], user(1), context.Background()
			truth := func(ch authz.ID) bool { return w.DB.State().IsActiveMember(community, usr, ch) }
			// Channels kept, channels lost, channels never held: 32 in all,
			// in a random order.
			probe := func() []authz.ID {
				var chs []authz.ID
				for range 12 {
					chs = append(chs, channel(1+perm[r.IntN(below)]))
				}
				for range 12 {
					chs = append(chs, channel(1+perm[below+r.IntN(above-below)]))
				}
				for range 8 {
					chs = append(chs, channel(above+1+r.IntN(nChannels-above)))
				}
				r.Shuffle(len(chs), func(i, j int) { chs[i], chs[j] = chs[j], chs[i] })
				return chs
			}
			measure := func(phase string) (counts, int, error) {
				before, err := countMS(w, pod)
				if err != nil {
					return counts{}, 0, fmt.Errorf("MS-4: %w", err)
				}
				wrong, made := checkAll(ctx, w, pod, 8, usr, probe(), truth)
				after, err := countMS(w, pod)
				if err != nil {
					return counts{}, 0, fmt.Errorf("MS-4: %w", err)
				}
				d := after.sub(before)
				if len(wrong) > 0 {
					return d, made, fmt.Errorf("MS-4: %s: %d wrong answers of %d, e.g. %s (%s)", phase, len(wrong), made, wrong[0], d)
				}
				return d, made, nil
			}
			// Above the cap: a marker.
			first := fmt.Sprintf("user with %d memberships", above)
			d, made, err := measure(first)
			if err != nil {
				return smp, err
			}
			markerLoaded := s.Elapsed()
			if made > 0 && (d.loads != 1 || d.points != int64(made) || d.oversize != int64(made)) {
				return smp, fmt.Errorf("MS-4: %s (above the %d-ID cap): %d checks gave %s; want one load and an oversize point check each (a marker)", first, capIDs, made, d)
			}
			// The user falls to the cap or below it; the removals'
			// invalidations are lost.
			if _, err := w.DB.Write(ctx, "shrink", func(t *authztest.Tables) {
				for _, c := range perm[below:] {
					_ = t.SetMember(usr, channel(1+c), false)
				}
			}); err != nil {
				return smp, fmt.Errorf("MS-4: the shrinking write failed: %v", err)
			}
			_ = s.Sleep(ctx, markerLoaded+fresh-s.Elapsed())
			then := fmt.Sprintf("the same user down to %d memberships (invalidations lost), %v after its marker's load", below, s.Elapsed()-markerLoaded)
			d, made, err = measure(then)
			if err != nil {
				return smp, err
			}
			smp.Of = int64(made)
			if made > 0 && (d.loads != 1 || d.points != 0 || d.oversize != 0 || d.misses != 1 || d.hits != int64(made-1)) {
				smp.Wrong = max(int64(made)-d.hits, 1) // the checks no snapshot answered
				smp.Witness = fmt.Sprintf("%s: %d checks gave %s; want one load, a snapshot, no point check or oversize fallback, %d hits", then, made, d, made-1)
				return smp, fmt.Errorf("MS-4: %s", smp.Witness)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d checks of a user fallen from above the snapshot cap to within it not served from a snapshot once the freshness bound had passed since its marker's load: %s", o.Wrong, o.Of, o.SeedsText())
		},
		Note: fmt.Sprintf("one pod, pool of 8, default configuration; one user from %d–%d down to %d–%d memberships, the removals' invalidations lost", capIDs+1, capIDs+16, capIDs-63, capIDs),
	})
}

// boundaryPod is the one-pod world of the MS-4 boundary checks: nChannels
// channels, the users' memberships, and a fast database pool (the checks
// count loads and point checks, not their latency).
func boundaryPod(s *sim.Sim, nChannels int, members [][]int) (*pods.World, authztest.Tables, error) {
	tables, err := tablesOf(nChannels, members)
	if err != nil {
		return nil, tables, err
	}
	w, err := onePod(s, tables, simdb.Config{PoolSize: 8, Latency: simdb.Latency{BaseMin: 100 * time.Microsecond, BaseMax: time.Millisecond}}, pods.Config{})
	return w, tables, err
}

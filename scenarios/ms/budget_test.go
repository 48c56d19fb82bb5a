package ms

import (
	"context"
	"errors"
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

// errOffline is what the database answers while the retained entries are
// probed: a check that needs the database fails, one a cached entry
// answers succeeds.
var errOffline = errors.New("ms8: the database is offline while the cache is probed")

// retained probes, from outside the cache, which of users (most recently
// loaded first) the pod still answers from a snapshot after maintenance:
// with the database offline, a retained snapshot answers and anything else
// fails (an absent entry's load, a marker's point check). Probing stops at
// the first user not retained: the cache evicts the least recently used,
// so the retained users are a prefix of this order, and the loading entry
// a probe of an absent user leaves must not evict the older ones yet to be
// probed. It returns how many were retained and the statements they cost
// (0 for a retained one).
func retained(w *pods.World, pod *pods.Pod, users []authz.ID, ch authz.ID) (int, error) {
	restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
		return simdb.Fault{Err: errOffline, Required: true}, true
	})
	if err != nil {
		return 0, err
	}
	defer restore()
	ctx := context.Background()
	n := 0
	for _, u := range users {
		before := w.DB.Stats().Statements
		_, err := pod.MS.IsMember(ctx, community, u, ch)
		switch {
		case err == nil && w.DB.Stats().Statements == before:
			n++
		case err == nil:
			return n, fmt.Errorf("a check succeeded with the database offline after running %d statements", w.DB.Stats().Statements-before)
		case errors.Is(err, errOffline):
			return n, nil
		default:
			return n, err
		}
	}
	return n, nil
}

// TestMS8_BudgetAtTheBound checks MS-8 at the source text's scale, with
// the default configuration: 280 users in 16,384 channels each (maximum-
// size lists, 256 KiB of IDs per snapshot) are loaded one after another on
// one pod, maintenance runs, and the snapshots the pod still answers from
// are found from outside (retained). Their payload, 16 bytes per ID the
// tables give those users, is a lower bound of the retained weight. It must
// stay within the 64 MiB budget of the claims table. The users fill the
// cache past the budget, so the payload must also come within 0.5% of it
// (a weigher that ignores the payload, or a budget 1% larger, keeps more).
// The entries and evictions Usage reports must be the ones found.
func TestMS8_BudgetAtTheBound(t *testing.T) {
	maxList := claims.Get("MS-8", "max list payload")
	snapshotIDs := claims.Get("MS-4", "snapshot ids")
	// The tables are the same in every run (every user a member of every
	// channel). So they are built once here, outside every run, and each
	// run takes a copy of its own, which is cheaper than 4.6 million
	// inserts, in every seed and every shrink re-run.
	ids := int(snapshotIDs.Int())
	usersFor := func(budget claims.Bound) int { return int(budget.Int()/maxList.Int()) + 24 } // past the budget
	baseUsers := usersFor(claims.Get("MS-8", "budget"))
	base, err := maxTables(ids, baseUsers) // read-only: the seeds run at once
	if err != nil {
		t.Fatal(err)
	}
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-8", Bound: "budget",
		// A directed construction: one client loads the users one after
		// another, so a seed changes only the statements' latencies, and
		// each seed takes seconds of CPU (64 MiB of snapshots). Three show
		// what it is for; -sim.seeds=200 would spend minutes on copies.
		Options: simtest.Options{Seeds: 1, MaxSeeds: 3},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			if got := int64(ids) * authz.IDSize; got != maxList.Int() {
				return smp, fmt.Errorf("MS-8: a maximum-size list is %d IDs of %d bytes = %d bytes, the source text says %s", ids, authz.IDSize, got, maxList.Format(maxList.Value))
			}
			users := usersFor(b)
			var tables authztest.Tables
			if users == baseUsers {
				tables = base.Clone()
			} else { // a bound other than the table's: its own (err is the run's own, not the test's)
				var err error
				if tables, err = maxTables(ids, users); err != nil {
					return smp, err
				}
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 8, Latency: simdb.Latency{BaseMin: 100 * time.Microsecond, BaseMax: time.Millisecond}}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			order := make([]authz.ID, users) // most recently loaded first
			for u := range users {
				if _, err := pod.MS.IsMember(ctx, community, user(u+1), channel(1)); err != nil {
					return smp, err
				}
				order[users-1-u] = user(u + 1)
			}
			pod.MS.Maintain()
			usage := pod.MS.Usage()
			n, err := retained(w, pod, order, channel(1))
			if err != nil {
				return smp, fmt.Errorf("MS-8: %w", err)
			}
			// Nothing expired or was invalidated: every user not retained
			// was evicted to fit the budget, and Usage must say so.
			if usage.Entries != n || usage.Evictions != int64(users-n) {
				return smp, fmt.Errorf("MS-8: after loading %d users the pod answers %d without the database, so %d were evicted; Usage says %d entries and %d evictions",
					users, n, users-n, usage.Entries, usage.Evictions)
			}
			// Each retained entry is a full snapshot: Usage's kinds and IDs
			// are the ones found too.
			if usage.Snapshots != n || usage.IDs != int64(n*ids) || usage.Markers != 0 || usage.Loading != 0 {
				return smp, fmt.Errorf("MS-8: the pod answers %d users of %d IDs each from snapshots; Usage says %d snapshots of %d IDs, %d markers, %d loading",
					n, ids, usage.Snapshots, usage.IDs, usage.Markers, usage.Loading)
			}
			payload := float64(int64(n) * maxList.Int())
			smp.Observe(payload, func() string {
				return fmt.Sprintf("after loading %d maximum-size lists and maintenance the pod answers %d of them without the database: %s of IDs retained",
					users, n, b.Format(payload))
			})
			if !b.Holds(payload) {
				return smp, fmt.Errorf("MS-8: %s", smp.Witness)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("retained payload %s (16 bytes per ID of the snapshots the pod answers from without the database), a lower bound of the retained weight", o.WorstText())
		},
		Note: "default configuration; users in 16,384 channels each, loaded past the budget; retained snapshots found by probing with the database offline",
	})
}

// TestMS8_EmptyEntriesAndMarkersWeigh checks the rest of MS-8: empty
// entries and markers have nonzero weight, so a budget of B bytes retains
// at most B of them. The pod runs with a 2 KiB budget and a 4-ID cap. It
// loads 4,000 users with no membership (empty snapshots) and 4,000 with 5
// (markers). The entries answered without a load are counted from outside
// (with the database offline, a retained empty snapshot answers, a retained
// marker runs its point check, an absent entry its load).
func TestMS8_EmptyEntriesAndMarkersWeigh(t *testing.T) {
	const budget, capIDs, perKind = 2048, 4, 4000
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-8", Options: simtest.Options{Seeds: 2},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			members := make([][]int, 2*perKind)
			for u := perKind; u < 2*perKind; u++ {
				members[u] = []int{1, 2, 3, 4, 5}
			}
			tables, err := tablesOf(5, members)
			if err != nil {
				return smp, err
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 4}, pods.Config{MS: membership.Config{BudgetBytes: budget, MaxSnapshotIDs: capIDs}})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			for _, kind := range []struct {
				name  string
				first int
				stmt  string
			}{{"empty snapshots", 0, pods.StmtActiveMemberships}, {"markers", perKind, pods.StmtIsActiveMember}} {
				for u := kind.first; u < kind.first+perKind; u++ {
					if _, err := pod.MS.IsMember(ctx, community, user(u+1), channel(1)); err != nil {
						return smp, err
					}
				}
				pod.MS.Maintain()
				usage := pod.MS.Usage()
				// Most recent first; a retained entry of this kind costs no
				// load (a marker costs its point check, which fails offline).
				n := 0
				restore, err := w.Override(func(simdb.Statement) (simdb.Fault, bool) { return simdb.Fault{Err: errOffline, Required: true}, true })
				if err != nil {
					return smp, err
				}
				for u := kind.first + perKind - 1; u >= kind.first; u-- {
					loads := w.DB.StatementsOf(pods.StmtActiveMemberships)
					_, _ = pod.MS.IsMember(ctx, community, user(u+1), channel(1))
					if w.DB.StatementsOf(pods.StmtActiveMemberships) != loads {
						break // not retained: its check had to load
					}
					n++
				}
				restore()
				smp.Of++
				// Every retained entry is of this kind (the budget holds a
				// few, and the later kind evicted the earlier): Usage must
				// count them as such.
				snaps, markers := n, 0
				if kind.first > 0 {
					snaps, markers = 0, n
				}
				if usage.Entries != n || usage.Snapshots != snaps || usage.Markers != markers || usage.IDs != 0 || usage.Loading != 0 {
					smp.Wrongly(func() string {
						return fmt.Sprintf("the pod answers %d %s without a load; Usage says %d entries: %d snapshots of %d IDs, %d markers, %d loading",
							n, kind.name, usage.Entries, usage.Snapshots, usage.IDs, usage.Markers, usage.Loading)
					})
				}
				if n > budget {
					smp.Wrongly(func() string {
						return fmt.Sprintf("a budget of %d bytes retained %d %s: they weigh nothing", budget, n, kind.name)
					})
				}
				if n == 0 {
					return smp, fmt.Errorf("MS-8: not one of %d %s was retained under a %d-byte budget: the probe cannot see retention", perKind, kind.name, budget)
				}
			}
			if smp.Wrong > 0 {
				return smp, fmt.Errorf("MS-8: %s", smp.Witness)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d budget probes retained more empty snapshots or markers than the budget has bytes: %s", o.Wrong, o.Of, o.SeedsText())
		},
	})
}

// TestMS8_EvictionKeepsAnswersRight checks that the budget costs reads,
// never correctness: a small cap and a budget of 1–6 maximum-size
// snapshots keep eviction constant while six clients check random users
// (of adversarial sizes: none, one, the cap minus one, the cap, the cap
// plus one, random) for 30 s. Every answer must match the tables.
func TestMS8_EvictionKeepsAnswersRight(t *testing.T) {
	const capIDs, nUsers, nChannels = 64, 48, 72
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-8", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
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
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			maxSnapshot := int64(capIDs*authz.IDSize) + 512
			budget := maxSnapshot*int64(1+r.IntN(6)) + r.Int64N(maxSnapshot)
			s.Note("membership budget %d bytes, cap %d IDs", budget, capIDs)
			w, err := onePod(s, tables, simdb.Config{PoolSize: 4, Latency: simdb.DefaultLatency}, pods.Config{MS: membership.Config{MaxSnapshotIDs: capIDs, BudgetBytes: budget}})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			end := s.Elapsed() + 30*time.Second
			loadsPerCheck := int64(0)
			wg := s.NewWaitGroup("clients")
			wg.Add(7)
			s.Go("maintenance", func() {
				defer wg.Done()
				for i := 0; i < 1000 && s.Elapsed() < end; i++ {
					_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(2*time.Second))))
					pod.MS.Maintain()
				}
			})
			for c := range 6 {
				s.Go(fmt.Sprintf("client%d", c), func() {
					defer wg.Done()
					for i := 0; i < 10_000 && s.Elapsed() < end; i++ {
						_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(50*time.Millisecond))))
						u, ch := user(1+r.IntN(nUsers)), channel(1+r.IntN(nChannels))
						got, err := pod.MS.IsMember(ctx, community, u, ch)
						smp.Of++
						if want := tables.IsActiveMember(community, u, ch); err != nil || got != want {
							smp.Wrongly(func() string {
								return fmt.Sprintf("%s/%s: got %v (%v), truth %v", pods.Short(u), pods.Short(ch), got, err, want)
							})
						}
					}
				})
			}
			_ = wg.Wait(ctx)
			loadsPerCheck = w.DB.StatementsOf(pods.StmtActiveMemberships)
			if loadsPerCheck <= int64(nUsers) {
				return smp, fmt.Errorf("MS-8: %d loads for %d users over 30 s: nothing was evicted, the scenario does not exercise the budget", loadsPerCheck, nUsers)
			}
			// Each load beyond one per user is at least one user evicted
			// and loaded again; count them all so the minimum does not
			// depend on how many seeds the run is given.
			for range loadsPerCheck - int64(nUsers) {
				s.Probe("ms/evicted-and-reloaded")
			}
			if smp.Wrong > 0 {
				return smp, fmt.Errorf("MS-8: %d wrong answers under eviction, e.g. %s", smp.Wrong, smp.Witness)
			}
			return smp, nil
		},
		Probes: []claims.Probe{{Name: "ms/evicted-and-reloaded", What: "users evicted under the budget and loaded again", Min: 10}},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d answers wrong under constant eviction", o.Wrong, o.Of)
		},
	})
}

// maxTables are the tables of users who are each a member of every one of
// ids channels.
func maxTables(ids, users int) (authztest.Tables, error) {
	all := make([]int, ids)
	for i := range all {
		all[i] = i + 1
	}
	members := make([][]int, users)
	for u := range members {
		members[u] = all
	}
	return tablesOf(ids, members)
}

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
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS1_ColdClientOneRead checks MS-1: a cold client in N channels
// causes one membership read, not N. Each seed connects cold clients one
// after another on one pod: one in 280 channels (the source text's
// figure), one in a single channel, and others in 2–280; each checks every
// channel it is in plus a few it is not, with 1–16 requests in flight. Per
// client the pod must run exactly one active_memberships statement on
// exactly one checkout, and no point check (counted by the database); every
// answer must match the tables.
func TestMS1_ColdClientOneRead(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-1", Bound: "reads per cold client", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			const nChannels = 300
			r := s.Rand()
			sizes := []int{280, 1, 2 + r.IntN(279), 2 + r.IntN(279), 2 + r.IntN(279)}
			members := make([][]int, len(sizes))
			for u, n := range sizes {
				members[u] = r.Perm(nChannels)[:n]
				for i := range members[u] {
					members[u][i]++
				}
			}
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			lat := simdb.Latency{BaseMin: 500 * time.Microsecond, BaseMax: time.Duration(1+r.IntN(50)) * time.Millisecond}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 1 + r.IntN(8), Latency: lat}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			for u, chs := range members {
				usr := user(u + 1)
				isMember := map[authz.ID]bool{}
				var probe []authz.ID
				for _, c := range chs {
					isMember[channel(c)] = true
					probe = append(probe, channel(c))
				}
				var others []authz.ID
				for c := 1; c <= nChannels; c++ {
					if !isMember[channel(c)] {
						others = append(others, channel(c))
					}
				}
				r.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
				probe = append(probe, others[:min(5, len(others))]...) // a few channels the client is not in
				r.Shuffle(len(probe), func(i, j int) { probe[i], probe[j] = probe[j], probe[i] })
				before, err := countMS(w, pod)
				if err != nil {
					return smp, fmt.Errorf("MS-1: %w", err)
				}
				wrong, made := checkAll(context.Background(), w, pod, 1+r.IntN(16), usr, probe, func(c authz.ID) bool { return isMember[c] })
				if made == 0 {
					continue // a shrunk run in which this client checks nothing: no read to count
				}
				after, err := countMS(w, pod)
				if err != nil {
					return smp, fmt.Errorf("MS-1: %w", err)
				}
				d := after.sub(before)
				smp.Observe(float64(d.loads+d.points), func() string {
					return fmt.Sprintf("cold client %s in %d channels, %d checks: %s", pods.Short(usr), len(chs), made, d)
				})
				if len(wrong) > 0 {
					return smp, fmt.Errorf("MS-1: cold client %s: %d wrong answers, e.g. %s", pods.Short(usr), len(wrong), wrong[0])
				}
				if !b.Holds(float64(d.loads+d.points)) || d.points != 0 || d.checkouts != 1 {
					return smp, fmt.Errorf("MS-1: cold client %s in %d channels (%d checks) caused %s; want %s membership load on 1 checkout and no point check",
						pods.Short(usr), len(chs), made, d, b.Format(b.Value))
				}
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s membership reads per cold client over %d cold clients in 1–280 channels (reads = full-set loads + point checks, counted by the database)", o.WorstText(), o.Of)
		},
	})
}

// TestMS5_ConcurrentColdChecksOneRead checks MS-5: requests for one user
// share a loading entry and its lock, and recheck after acquiring it, so K
// concurrent cold checks of one user cause one read. Each seed starts, at
// one instant, K = 2–64 requests for each of 1–4 cold users (a load takes
// up to 1 s, under LockWait, so every waiter shares it). The pod must run
// exactly one load per user, on one checkout each, and answer every
// request correctly. The cache counts one miss per user and a hit for
// every other request.
func TestMS5_ConcurrentColdChecksOneRead(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-5", Bound: "reads per concurrent cold checks", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			const nChannels = 64
			r := s.Rand()
			users := 1 + r.IntN(4)
			members := randomMembers(r, users, nChannels)
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			lat := simdb.Latency{BaseMin: time.Millisecond, BaseMax: time.Duration(1+r.IntN(1000)) * time.Millisecond}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 1 + r.IntN(8), Latency: lat}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			if err := registered(pod); err != nil {
				return smp, fmt.Errorf("MS-5: %w", err)
			}
			ks := make([]int, users)
			var wrong []string
			total := 0
			active := 0 // users that made a check (a shrunk run may drop every check of a user)
			wg := s.NewWaitGroup("users")
			wg.Add(users)
			for u := range users {
				usr := user(u + 1)
				isMember := map[authz.ID]bool{}
				for _, c := range members[u] {
					isMember[channel(c)] = true
				}
				ks[u] = 2 + r.IntN(63)
				probe := make([]authz.ID, ks[u])
				for i := range probe {
					probe[i] = channel(1 + r.IntN(nChannels))
				}
				s.Go(fmt.Sprintf("burst-%s", pods.Short(usr)), func() {
					defer wg.Done()
					// One task per request: all K are in flight at once.
					bad, made := checkAll(context.Background(), w, pod, ks[u], usr, probe, func(c authz.ID) bool { return isMember[c] })
					wrong = append(wrong, bad...)
					total += made
					if made > 0 {
						active++
					}
				})
			}
			_ = wg.Wait(context.Background())
			d, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-5: %w", err)
			}
			smp.Observe(float64(d.loads)/float64(max(active, 1)), func() string {
				return fmt.Sprintf("%d users with K=%v concurrent cold checks: %s", users, ks, d)
			})
			smp.Of = int64(total)
			switch {
			case len(wrong) > 0:
				return smp, fmt.Errorf("MS-5: %d wrong answers, e.g. %s", len(wrong), wrong[0])
			case d.loads != int64(active)*b.Int() || d.points != 0 || d.checkouts != int64(active):
				return smp, fmt.Errorf("MS-5: %d users with K=%v concurrent cold checks caused %s; want exactly %d loads on %d checkouts, no point check",
					active, ks, d, active, active)
			case d.misses != int64(active) || d.hits != int64(total-active):
				return smp, fmt.Errorf("MS-5: cache counted %s for %d requests of %d users; want %d misses and %d hits", d, total, active, active, total-active)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s membership reads per user over %d concurrent cold requests (K = 2–64 per user)", o.WorstText(), o.Of)
		},
		Note: "one pod, pool of 1–8, loads of up to 1 s (LockWait 2 s)",
	})
}

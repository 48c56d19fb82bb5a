package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

var msCommunity = authz.NewID('c', 1)

// msChannel is channel i (1-based) of msCommunity.
func msChannel(i int) authz.ID { return authz.NewID('h', uint64(i)) }

// msUser is user i.
func msUser(i int) authz.ID { return authz.NewID('u', uint64(i)) }

// msTables returns nChannels private channels of msCommunity and, for each
// user i, memberships in the channels members[i] lists.
func msTables(nChannels int, members [][]int) (relay.Tables, error) {
	t := relay.NewTables()
	for i := 1; i <= nChannels; i++ {
		if err := t.AddChannel(relay.Channel{ID: msChannel(i), Community: msCommunity}); err != nil {
			return t, err
		}
	}
	for u, chs := range members {
		for _, c := range chs {
			if err := t.SetMember(msUser(u+1), msChannel(c), true); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// msOnePod is a one-pod world on a reliable bus and a database with the
// given pool and latency and no injected faults unless hook adds them.
func msOnePod(s *sim.Sim, tables relay.Tables, db simdb.Config, cfg relay.Config) (*relay.World, error) {
	cfg.Pods = 1
	cfg.DB = db
	cfg.Bus = simbus.Config{Faults: simbus.Reliable()}
	s.Note("%s", db.String())
	return relay.NewWorld(s, cfg, tables)
}

// msCheckAll has `tasks` concurrent requests check the channels of user on
// pod, each request taking the next unchecked channel, and returns how many
// answers differed from want (or failed).
func msCheckAll(ctx context.Context, w *relay.World, pod *relay.Pod, tasks int, user authz.ID, channels []authz.ID, want func(authz.ID) bool) (wrong []string) {
	s := w.S
	next := 0
	wg := s.NewWaitGroup("checks")
	wg.Add(tasks)
	for i := range tasks {
		s.Go(fmt.Sprintf("check-%s-%d", relay.Short(user), i), func() {
			defer wg.Done()
			for next < len(channels) {
				ch := channels[next]
				next++
				got, err := pod.MS.IsMember(ctx, msCommunity, user, ch)
				switch {
				case err != nil:
					wrong = append(wrong, fmt.Sprintf("%s/%s: %v", relay.Short(user), relay.Short(ch), err))
				case got != want(ch):
					wrong = append(wrong, fmt.Sprintf("%s/%s: got %v, truth %v", relay.Short(user), relay.Short(ch), got, want(ch)))
				}
			}
		})
	}
	_ = wg.Wait(ctx)
	return wrong
}

// TestMS1_ColdClientOneRead checks MS-1: a cold client in N channels
// causes one membership read, not N. Each seed connects cold clients one
// after another on one pod: one in 280 channels (the seed's figure), one in
// a single channel, and others in 2–280; each checks every channel it is in
// plus a few it is not, with 1–16 requests in flight. Per client the pod
// must run exactly one active_memberships statement on exactly one
// checkout, and no point check; every answer must match the tables.
func TestMS1_ColdClientOneRead(t *testing.T) {
	type seedFigures struct {
		clients, checks280 int
		worst              claims.Max // membership reads per cold client
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 10}, func(s *sim.Sim) error {
		const nChannels = 300
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		sizes := []int{280, 1, 2 + r.IntN(279), 2 + r.IntN(279), 2 + r.IntN(279)}
		members := make([][]int, len(sizes))
		for u, n := range sizes {
			members[u] = r.Perm(nChannels)[:n]
			for i := range members[u] {
				members[u][i]++
			}
		}
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		lat := simdb.Latency{BaseMin: 500 * time.Microsecond, BaseMax: time.Duration(1+r.IntN(50)) * time.Millisecond}
		w, err := msOnePod(s, tables, simdb.Config{PoolSize: 1 + r.IntN(8), Latency: lat}, relay.Config{})
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		for u, chs := range members {
			user := msUser(u + 1)
			isMember := map[authz.ID]bool{}
			var probe []authz.ID
			for _, c := range chs {
				isMember[msChannel(c)] = true
				probe = append(probe, msChannel(c))
			}
			var others []authz.ID
			for c := 1; c <= nChannels; c++ {
				if !isMember[msChannel(c)] {
					others = append(others, msChannel(c))
				}
			}
			r.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
			probe = append(probe, others[:min(5, len(others))]...) // a few channels the client is not in
			r.Shuffle(len(probe), func(i, j int) { probe[i], probe[j] = probe[j], probe[i] })
			before := countMS(w, pod)
			wrong := msCheckAll(context.Background(), w, pod, 1+r.IntN(16), user, probe, func(c authz.ID) bool { return isMember[c] })
			d := countMS(w, pod).sub(before)
			fig.clients++
			if len(chs) == 280 {
				fig.checks280 += len(probe)
			}
			fig.worst.Observe(float64(d.loads+d.points), func() string {
				return fmt.Sprintf("seed %#x: cold client %s in %d channels, %d checks: %s", s.Seed(), relay.Short(user), len(chs), len(probe), d)
			})
			if len(wrong) > 0 {
				return fmt.Errorf("MS-1: cold client %s: %d wrong answers, e.g. %s", relay.Short(user), len(wrong), wrong[0])
			}
			if d.loads != 1 || d.points != 0 || d.checkouts != 1 {
				return fmt.Errorf("MS-1: cold client %s in %d channels (%d checks) caused %s; want 1 membership load on 1 checkout and no point check",
					relay.Short(user), len(chs), len(probe), d)
			}
		}
		return nil
	})
	var clients, checks280 int
	results.Each(func(_ uint64, f *seedFigures) { clients, checks280 = clients+f.clients, checks280+f.checks280 })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-1", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("max %v membership reads per cold client over %d cold clients (in 1–280 channels; %d checks by the 280-channel clients)", worst.Value, clients, checks280),
		Bound:    "= 1 read per cold client", Value: worst.Value, Unit: "reads", Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "one pod, pool of 1–8, 1–16 requests in flight per client; reads = active_memberships + is_active_member statements",
	})
}

// TestMS5_ConcurrentColdChecksOneRead checks MS-5: requests for one user
// share a loading entry and its lock, and recheck after acquiring it, so K
// concurrent cold checks of one user cause one read. Each seed starts, at
// one instant, K = 2–64 requests for each of 1–4 cold users (a load takes
// up to 1 s, under LockWait, so every waiter shares it): the pod must run
// exactly one load per user, on one checkout each, and answer every
// request correctly; the cache counts one miss per user and a hit for
// every other request.
func TestMS5_ConcurrentColdChecksOneRead(t *testing.T) {
	type seedFigures struct {
		requests int
		worst    claims.Max // membership reads per user
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 20}, func(s *sim.Sim) error {
		const nChannels = 64
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		users := 1 + r.IntN(4)
		members := randomMembers(r, users, nChannels)
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		lat := simdb.Latency{BaseMin: time.Millisecond, BaseMax: time.Duration(1+r.IntN(1000)) * time.Millisecond}
		w, err := msOnePod(s, tables, simdb.Config{PoolSize: 1 + r.IntN(8), Latency: lat}, relay.Config{})
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		ks := make([]int, users)
		var wrong []string
		wg := s.NewWaitGroup("users")
		wg.Add(users)
		for u := range users {
			user := msUser(u + 1)
			isMember := map[authz.ID]bool{}
			for _, c := range members[u] {
				isMember[msChannel(c)] = true
			}
			ks[u] = 2 + r.IntN(63)
			fig.requests += ks[u]
			probe := make([]authz.ID, ks[u])
			for i := range probe {
				probe[i] = msChannel(1 + r.IntN(nChannels))
			}
			s.Go(fmt.Sprintf("burst-%s", relay.Short(user)), func() {
				defer wg.Done()
				// One task per request: all K are in flight at once.
				wrong = append(wrong, msCheckAll(context.Background(), w, pod, ks[u], user, probe, func(c authz.ID) bool { return isMember[c] })...)
			})
		}
		_ = wg.Wait(context.Background())
		d := countMS(w, pod)
		total := 0
		for _, k := range ks {
			total += k
		}
		fig.worst.Observe(float64(d.loads)/float64(users), func() string {
			return fmt.Sprintf("seed %#x: %d users with K=%v concurrent cold checks: %s", s.Seed(), users, ks, d)
		})
		if len(wrong) > 0 {
			return fmt.Errorf("MS-5: %d wrong answers, e.g. %s", len(wrong), wrong[0])
		}
		if d.loads != int64(users) || d.points != 0 || d.checkouts != int64(users) {
			return fmt.Errorf("MS-5: %d users with K=%v concurrent cold checks caused %s; want exactly %d loads on %d checkouts, no point check",
				users, ks, d, users, users)
		}
		if d.misses != int64(users) || d.hits != int64(total-users) {
			return fmt.Errorf("MS-5: cache counted %s for %d requests of %d users; want %d misses and %d hits", d, total, users, users, total-users)
		}
		return nil
	})
	requests := 0
	results.Each(func(_ uint64, f *seedFigures) { requests += f.requests })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-5", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("max %v membership reads per user over %d concurrent cold requests (K = 2–64 per user)", worst.Value, requests),
		Bound:    "= 1 read per user", Value: worst.Value, Unit: "reads", Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "one pod, pool of 1–8, loads of up to 1 s (LockWait 2 s)",
	})
}

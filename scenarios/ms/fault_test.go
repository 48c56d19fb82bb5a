package ms

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/stale"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS6_LockWaitTimeoutPointCheck checks MS-6: if waiting for the user's
// lock times out, the check is an authoritative point check, counted as
// fallbacks_total{reason="wait_timeout"}. On one pod, 40–90% of the
// membership loads take 2.1–4 s, longer than LockWait (2 s); the first load
// of the run is always slow and starts under a burst of requests for its
// user. Eight clients check random users' channels for 30 s. Every answer
// must match the tables (truth does not change here), timeouts must happen,
// and the wait_timeout counter must equal the fallbacks the harness
// observes: point-check statements at the database (no user is above the
// cap and nothing fails, so every point check is a wait-timeout fallback).
func TestMS6_LockWaitTimeoutPointCheck(t *testing.T) {
	const nUsers, nChannels = 4, 16
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-6", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			members := make([][]int, nUsers)
			for u := range members {
				for c := 1; c <= nChannels; c++ {
					if (u+c)%2 == 0 || r.IntN(4) == 0 {
						members[u] = append(members[u], c)
					}
				}
			}
			tables, err := tablesOf(nChannels, members)
			if err != nil {
				return smp, err
			}
			slowProb := 0.4 + 0.5*r.Float64()
			loads := 0
			db := simdb.Config{PoolSize: 8, Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
				if st.Name != pods.StmtActiveMemberships {
					return simdb.Fault{}
				}
				loads++
				if loads == 1 || r.Float64() < slowProb {
					return simdb.Fault{Fixed: true, Latency: 2100*time.Millisecond + time.Duration(r.Int64N(int64(1900*time.Millisecond)))}
				}
				return simdb.Fault{}
			}}
			s.Note("slow loads (2.1–4 s): %.0f%%", 100*slowProb)
			w, err := onePod(s, tables, db, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			if err := registered(pod); err != nil {
				return smp, fmt.Errorf("MS-6: %w", err)
			}
			ctx := context.Background()
			check := func(u, ch authz.ID) {
				got, err := pod.MS.IsMember(ctx, community, u, ch)
				smp.Of++
				if want := tables.IsActiveMember(community, u, ch); err != nil || got != want {
					smp.Wrongly(func() string {
						return fmt.Sprintf("%s/%s at +%v: got %v (%v), truth %v", pods.Short(u), pods.Short(ch), s.Elapsed(), got, err, want)
					})
				}
			}
			end := s.Elapsed() + 30*time.Second
			wg := s.NewWaitGroup("clients")
			wg.Add(4 + 8)
			for i := range 4 { // the opening burst on user 1: one loader, three waiters
				s.Go(fmt.Sprintf("burst%d", i), func() {
					defer wg.Done()
					check(user(1), channel(1+r.IntN(nChannels)))
				})
			}
			for c := range 8 {
				s.Go(fmt.Sprintf("client%d", c), func() {
					defer wg.Done()
					for i := 0; i < 10_000 && s.Elapsed() < end; i++ {
						_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(500*time.Millisecond))))
						check(user(1+r.IntN(nUsers)), channel(1+r.IntN(nChannels)))
					}
				})
			}
			_ = wg.Wait(ctx)
			d, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-6: %w", err)
			}
			if d.waitTimeout > 0 {
				s.Probe("ms/lock-wait-timed-out")
			}
			return judgeFallbacks(smp, d, "under lock-wait timeouts")
		},
		Probes: []claims.Probe{{Name: "ms/lock-wait-timed-out", What: "a check's wait for its user's lock timed out", Min: 5}},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d checks wrong or miscounted under lock-wait timeouts (%d seeds with timeouts); the wait_timeout counter compared with the point checks the database ran", o.Wrong, o.Of, o.Probes[0].Seeds)
		},
		Note: "one pod, LockWait 2 s (default), 40–90% of loads 2.1–4 s; static truth",
	})
}

// TestMS6_WaitRoundsRunOutUnderAnInvalidationStorm checks MS-6's other way
// out of waiting: a check that waited for its user's lock in as many rounds
// as the cache allows, each round finding another request's load of the
// user in its place, stops waiting and asks the database, counted as a
// wait_timeout fallback. Swarm seeds do not reach it: each round needs the
// entry dropped during a load and another request's load started before the
// waiter looks again. Here they are made on purpose. On one pod, 12 cold
// checks of one user start at once (one loads, eleven wait). Every load
// takes 100 ms, and the user's entry is invalidated every 50 ms. So no
// load publishes, and each round one waiter becomes the next loader while
// the others wait again. LockWait is set to 30 s, so no wait times out: a
// point check the database runs before it is a fallback of exhausted
// rounds. Every answer must match the tables, some checks must end so
// (probe ms/wait-rounds-ran-out, counted by the point checks of a seed
// whose every check ended within a second), and the wait_timeout counter
// must equal the point checks.
func TestMS6_WaitRoundsRunOutUnderAnInvalidationStorm(t *testing.T) {
	const nChannels, checks = 16, 12
	const load, every, lockWait = 100 * time.Millisecond, 50 * time.Millisecond, 30 * time.Second
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-6", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			tables, err := tablesOf(nChannels, randomMembers(r, 1, nChannels))
			if err != nil {
				return smp, err
			}
			db := simdb.Config{PoolSize: 16, Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
				if st.Name != pods.StmtActiveMemberships {
					return simdb.Fault{}
				}
				return simdb.Fault{Fixed: true, Latency: load}
			}}
			w, err := onePod(s, tables, db, pods.Config{MS: membership.Config{LockWait: lockWait}})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			var longest time.Duration
			done := false
			storm := s.NewWaitGroup("storm")
			storm.Add(1)
			s.Go("invalidator", func() {
				defer storm.Done()
				for i := 0; i < 200 && !done; i++ { // bounded: the checks end within 200 rounds of it
					_ = s.Sleep(ctx, every)
					pod.MS.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user(1), ChannelID: channel(1)})
				}
			})
			wg := s.NewWaitGroup("checks")
			wg.Add(checks)
			for i := range checks {
				ch := channel(1 + r.IntN(nChannels))
				s.Go(fmt.Sprintf("check%d", i), func() {
					defer wg.Done()
					start := s.Elapsed()
					got, err := pod.MS.IsMember(ctx, community, user(1), ch)
					longest = max(longest, s.Elapsed()-start)
					smp.Of++
					if want := tables.IsActiveMember(community, user(1), ch); err != nil || got != want {
						smp.Wrongly(func() string {
							return fmt.Sprintf("%s/%s at +%v: got %v (%v), truth %v", pods.Short(user(1)), pods.Short(ch), s.Elapsed(), got, err, want)
						})
					}
				})
			}
			_ = wg.Wait(ctx)
			done = true
			_ = storm.Wait(ctx)
			d, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-6: %w", err)
			}
			s.Note("the longest check took %v; %s", longest, d)
			if longest < time.Second {
				for range d.points {
					s.Probe("ms/wait-rounds-ran-out")
				}
			}
			return judgeFallbacks(smp, d, "when the wait rounds ran out")
		},
		Probes: []claims.Probe{{Name: "ms/wait-rounds-ran-out", What: "a check stopped waiting for its user's lock after the last round, long before LockWait", Min: 10}},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d checks wrong or miscounted when their wait rounds ran out (%d fallbacks of exhausted rounds in %d seeds); the wait_timeout counter compared with the point checks the database ran", o.Wrong, o.Of, o.Probes[0].Count, o.Probes[0].Seeds)
		},
		Note: "one pod, 12 cold checks of one user at once, loads 100 ms, the user invalidated every 50 ms, LockWait 30 s; static truth",
	})
}

// judgeFallbacks is MS-6's verdict on a seed whose every point check is a
// wait_timeout fallback (no user above the cap, no failure): no answer
// wrong, and the wait_timeout counter equal to the point checks the
// database ran. when says under what the answers were given.
func judgeFallbacks(smp claims.Sample, d counts, when string) (claims.Sample, error) {
	switch {
	case smp.Wrong > 0:
		return smp, fmt.Errorf("MS-6: %d of %d answers wrong %s (%s), e.g. %s", smp.Wrong, smp.Of, when, d, smp.Witness)
	case d.waitTimeout != d.points:
		smp.Wrongly(func() string {
			return fmt.Sprintf("fallbacks_total{reason=\"wait_timeout\"} is %d but the database ran %d point checks (%s)", d.waitTimeout, d.points, d)
		})
		return smp, fmt.Errorf("MS-6: %s", smp.Witness)
	}
	return smp, nil
}

// errInjected is the database failure MS-7 injects.
var errInjected = errors.New("ms7: injected database failure")

// faultSeed is one seed of MS-7.
type faultSeed struct {
	smp                          claims.Sample
	failed, cancelled, followups int64
}

// TestMS7_FailuresPropagate checks MS-7: database failures propagate (no
// decision is cached from a failed read) and cancellation releases the user
// lock. On one pod with reliable invalidation, for 20 s, 20–50% of reads
// fail (injected), a fifth of the requests are cancelled after 0–10 ms,
// and admins change memberships. Then the faults stop and every user gets
// one follow-up request. Checks:
//
//   - No wrong answer: every successful answer was true at some instant of
//     its request. Staleness is 0: the one pod applies each write's
//     invalidation at its commit instant.
//   - No stuck waiter: the run ends. Every follow-up succeeds within
//     LockWait without a wait_timeout fallback (a lock kept by a failed or
//     cancelled load makes it wait LockWait).
//   - Failures propagate: the injected failures reach the clients as
//     errors. The seed saw cancelled requests too (probes).
func TestMS7_FailuresPropagate(t *testing.T) {
	const nUsers, nChannels = 8, 8
	claims.Run(t, claims.Check[faultSeed]{
		Claim: "MS-7", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (faultSeed, error) {
			var f faultSeed
			r := s.Rand()
			c := pods.MSChurn{Community: community}
			for i := range nUsers {
				c.Users = append(c.Users, user(i+1))
			}
			for i := range nChannels {
				c.Channels = append(c.Channels, channel(i+1))
			}
			tables, err := c.Tables()
			if err != nil {
				return f, err
			}
			errProb := 0.2 + 0.3*r.Float64()
			faulty := true
			db := simdb.Config{PoolSize: 1 + r.IntN(8), Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
				if faulty && !st.Write && r.Float64() < errProb {
					s.Probe("ms/read-failure-injected")
					return simdb.Fault{Err: errInjected}
				}
				return simdb.Fault{}
			}}
			s.Note("read errors %.0f%% until +20s, pool %d", 100*errProb, db.PoolSize)
			w, err := onePod(s, tables, db, pods.Config{})
			if err != nil {
				return f, err
			}
			if err := c.TrackAll(w); err != nil {
				return f, err
			}
			pod := w.Pods[0]
			ctx := context.Background()
			lockWait := pod.MS.Config().LockWait
			end := s.Elapsed() + 20*time.Second
			wg := s.NewWaitGroup("faulty")
			wg.Add(1 + 10)
			s.Go("admin", func() {
				defer wg.Done()
				for i := 0; i < 1000 && s.Elapsed() < end; i++ {
					_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(2*time.Second))))
					change := pods.GrantMember
					if r.IntN(2) == 0 {
						change = pods.RemoveMember
					}
					_ = w.Write(ctx, pod, -1, change, community, user(1+r.IntN(nUsers)), channel(1+r.IntN(nChannels)))
				}
			})
			for cl := range 10 {
				s.Go(fmt.Sprintf("client%d", cl), func() {
					defer wg.Done()
					for i := 0; i < 10_000 && s.Elapsed() < end; i++ {
						_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(300*time.Millisecond))))
						rctx, cancel := ctx, context.CancelFunc(func() {})
						if r.IntN(5) == 0 {
							rctx, cancel = s.WithTimeout(ctx, time.Duration(r.Int64N(int64(10*time.Millisecond))))
						}
						u := user(1 + r.IntN(nUsers))
						for range 1 + r.IntN(3) {
							_, err := w.IsMember(rctx, pod, cl, community, u, channel(1+r.IntN(nChannels)))
							switch {
							case errors.Is(err, pods.ErrSkipped): // dropped by a shrinker: not made
							case errors.Is(err, errInjected):
								f.failed++
							case errors.Is(err, context.DeadlineExceeded):
								f.cancelled++
							case err != nil:
								s.Failf("MS-7: unexpected error %v", err)
							}
						}
						cancel()
					}
				})
			}
			_ = wg.Wait(ctx)
			faulty = false
			// One cancellation is guaranteed in every seed, whatever the
			// random clients did: a cold load cancelled while its statement
			// runs (the statement takes at least 0.5 ms, the cancellation
			// comes after 0.1 ms). Its user is among the follow-ups below,
			// which must then proceed: the cancelled load released the lock.
			cold := user(1)
			pod.Relay.Invalidate(relay.MembershipChanged(community, cold, channel(1)))
			cctx, ccancel := s.WithCancel(ctx)
			cancelled := s.NewEvent("cancelled-request")
			s.Go("cancelled-request", func() {
				defer cancelled.Set()
				_, err := w.IsMember(cctx, pod, 99, community, cold, channel(1))
				switch {
				case errors.Is(err, pods.ErrSkipped): // dropped by a shrinker: not made
				case errors.Is(err, context.Canceled):
					f.cancelled++
					s.Probe("ms/load-cancelled")
				case err != nil:
					s.Failf("MS-7: a cancelled request failed with %v, not its context's error", err)
				default:
					s.Failf("MS-7: a request cancelled during its load answered anyway")
				}
			})
			_ = s.Sleep(ctx, 100*time.Microsecond)
			ccancel()
			_ = cancelled.Wait(ctx)
			// The follow-ups: every user at once, right after the faults.
			before, err := countMS(w, pod)
			if err != nil {
				return f, fmt.Errorf("MS-7: %w", err)
			}
			var stuck []string
			fwg := s.NewWaitGroup("follow-ups")
			fwg.Add(nUsers)
			for u := range nUsers {
				s.Go(fmt.Sprintf("follow-up-u%d", u+1), func() {
					defer fwg.Done()
					start := s.Elapsed()
					_, err := w.IsMember(ctx, pod, 100+u, community, user(u+1), channel(1+r.IntN(nChannels)))
					if errors.Is(err, pods.ErrSkipped) {
						// Dropped by a shrinker: a request never made is
						// not stuck (counting it as one made every shrunk
						// MS-7 counterexample a run with no follow-up).
						return
					}
					took := s.Elapsed() - start
					f.followups++
					if err != nil || took >= lockWait {
						stuck = append(stuck, fmt.Sprintf("u%d: took %v, err %v", u+1, took, err))
					}
				})
			}
			_ = fwg.Wait(ctx)
			after, err := countMS(w, pod)
			if err != nil {
				return f, fmt.Errorf("MS-7: %w", err)
			}
			d := after.sub(before)
			// Wrong answers: any answer not true at some instant of its request.
			grant, deny, err := w.StalenessBoth(0, pods.Membership)
			if err != nil {
				return f, fmt.Errorf("MS-7: %w", err)
			}
			for _, st := range []pods.Staleness{grant, deny} {
				f.smp.Of += int64(st.Reads)
				for _, v := range st.Values {
					if v > 0 {
						f.smp.Wrongly(func() string { return stale.Witness(st.Witness, w.History.Describe) })
					}
				}
				if st.Phantoms > 0 {
					f.smp.Wrong += int64(st.Phantoms)
					f.smp.Witness = fmt.Sprintf("phantom answer: %s", w.History.Describe(st.PhantomExamples[0].ID))
				}
			}
			if f.failed > 0 {
				s.Probe("ms/failure-reached-client")
			}
			switch {
			case f.smp.Wrong > 0:
				return f, fmt.Errorf("MS-7: %d answers were not true at any instant of their request, e.g. %s", f.smp.Wrong, f.smp.Witness)
			case len(stuck) > 0 || d.waitTimeout > 0:
				return f, fmt.Errorf("MS-7: after the faults, %d of %d follow-up requests did not proceed within LockWait %v (%s): %v", len(stuck), f.followups, lockWait, d, stuck)
			}
			return f, nil
		},
		Sample: func(f faultSeed) claims.Sample { return f.smp },
		Probes: []claims.Probe{
			{Name: "ms/read-failure-injected", What: "a database read failed (injected)", Min: 10},
			{Name: "ms/failure-reached-client", What: "an injected failure reached a client as an error", Min: 5},
			{Name: "ms/load-cancelled", What: "a request was cancelled while its load ran", Min: 5},
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d answers not true at any instant of their request; %s", o.Wrong, o.Of, o.SeedsText())
		},
		More: claims.Hooks[faultSeed]{
			NoteFrom: func(o claims.Outcome) string {
				return fmt.Sprintf("one pod, reliable bus; injected read failures in %d seeds reached clients; follow-ups after the faults must proceed within LockWait", o.Probes[1].Seeds)
			},
		},
	})
}

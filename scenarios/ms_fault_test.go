package scenarios

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
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
	type seedFigures struct {
		timeouts, answers int64
		worst             claims.Max // wrong answers
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 10}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		members := make([][]int, nUsers)
		for u := range members {
			for c := 1; c <= nChannels; c++ {
				if (u+c)%2 == 0 || r.IntN(4) == 0 {
					members[u] = append(members[u], c)
				}
			}
		}
		tables, err := msTables(nChannels, members)
		if err != nil {
			return err
		}
		slowProb := 0.4 + 0.5*r.Float64()
		loads := 0
		db := simdb.Config{PoolSize: 8, Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
			if st.Name != relay.StmtActiveMemberships {
				return simdb.Fault{}
			}
			loads++
			if loads == 1 || r.Float64() < slowProb {
				return simdb.Fault{Fixed: true, Latency: 2100*time.Millisecond + time.Duration(r.Int64N(int64(1900*time.Millisecond)))}
			}
			return simdb.Fault{}
		}}
		s.Note("slow loads (2.1–4 s): %.0f%%", 100*slowProb)
		w, err := msOnePod(s, tables, db, relay.Config{})
		if err != nil {
			return err
		}
		pod := w.Pods[0]
		ctx := context.Background()
		var wrong []string
		var n int64
		check := func(user, ch authz.ID) {
			got, err := pod.MS.IsMember(ctx, msCommunity, user, ch)
			n++
			if want := tables.IsActiveMember(msCommunity, user, ch); err != nil || got != want {
				wrong = append(wrong, fmt.Sprintf("%s/%s at +%v: got %v (%v), truth %v", relay.Short(user), relay.Short(ch), s.Elapsed(), got, err, want))
			}
		}
		end := s.Elapsed() + 30*time.Second
		wg := s.NewWaitGroup("clients")
		wg.Add(4 + 8)
		for i := range 4 { // the opening burst on user 1: one loader, three waiters
			s.Go(fmt.Sprintf("burst%d", i), func() {
				defer wg.Done()
				check(msUser(1), msChannel(1+r.IntN(nChannels)))
			})
		}
		for c := range 8 {
			s.Go(fmt.Sprintf("client%d", c), func() {
				defer wg.Done()
				for i := 0; i < 10_000 && s.Elapsed() < end; i++ {
					_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(500*time.Millisecond))))
					check(msUser(1+r.IntN(nUsers)), msChannel(1+r.IntN(nChannels)))
				}
			})
		}
		_ = wg.Wait(ctx)
		d := countMS(w, pod)
		fig.timeouts, fig.answers = d.waitTimeout, n
		fig.worst.Observe(float64(len(wrong)), func() string {
			return fmt.Sprintf("seed %#x: %d checks: %s", s.Seed(), n, d)
		})
		switch {
		case len(wrong) > 0:
			return fmt.Errorf("MS-6: %d of %d answers wrong under lock-wait timeouts (%s), e.g. %s", len(wrong), n, d, wrong[0])
		case d.waitTimeout != d.points:
			return fmt.Errorf("MS-6: fallbacks_total{reason=\"wait_timeout\"} is %d but the database ran %d point checks (%s)", d.waitTimeout, d.points, d)
		case d.waitTimeout == 0:
			return fmt.Errorf("MS-6: no lock wait timed out (%s): the scenario does not exercise the timeout", d)
		}
		return nil
	})
	var timeouts, answers int64
	results.Each(func(_ uint64, f *seedFigures) { timeouts, answers = timeouts+f.timeouts, answers+f.answers })
	worst := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.worst })
	claims.Report(t, claims.Record{
		ID: "MS-6", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("%v wrong answers over %d checks with %d wait_timeout fallbacks, each counter equal to the point checks observed", worst.Value, answers, timeouts),
		Bound:    "0 wrong; counter = observed fallbacks", Value: worst.Value, Unit: "wrong answers", Seeds: sum.Seeds, Witness: worst.Witness,
		Note: "one pod, LockWait 2 s (default), 40–90% of loads 2.1–4 s; static truth",
	})
}

// errMS7 is the database failure MS-7 injects.
var errMS7 = errors.New("ms7: injected database failure")

// TestMS7_FailuresPropagate checks MS-7: database failures propagate (no
// decision is cached from a failed read) and cancellation releases the user
// lock. On one pod with reliable invalidation, for 20 s, 20–50% of reads
// fail (injected), a fifth of the requests are cancelled after 0–10 ms,
// and admins change memberships. Then the faults stop and every user gets
// one follow-up request. Checks:
//
//   - no wrong answer: every successful answer was true at some instant of
//     its request (staleness bound 0: the one pod applies each write's
//     invalidation at its commit instant, as virtual time stands still
//     between them; under -sim.steptime a few steps' time would show);
//   - no stuck waiter: the run ends, and every follow-up succeeds within
//     LockWait without a wait_timeout fallback (a lock kept by a failed or
//     cancelled load makes it wait LockWait);
//   - failures propagate: the injected failures reach the clients as
//     errors (and the seed saw cancelled requests too).
func TestMS7_FailuresPropagate(t *testing.T) {
	const nUsers, nChannels = 8, 8
	stale := &msStaleness{id: "MS-7", grant: true, deny: true, bound: 0}
	type seedFigures struct {
		failed, cancelled, followups int64
		slowest                      claims.Max // follow-up latency, s
	}
	var results claims.PerSeed[*seedFigures]
	sum := simtest.Run(t, simtest.Options{Seeds: 10}, func(s *sim.Sim) error {
		fig := &seedFigures{}
		results.Set(s.Seed(), fig)
		r := s.Rand()
		c := relay.MSChurn{Community: msCommunity}
		for i := range nUsers {
			c.Users = append(c.Users, msUser(i+1))
		}
		for i := range nChannels {
			c.Channels = append(c.Channels, msChannel(i+1))
		}
		tables, err := c.Tables()
		if err != nil {
			return err
		}
		errProb := 0.2 + 0.3*r.Float64()
		faulty := true
		injected := 0
		db := simdb.Config{PoolSize: 1 + r.IntN(8), Latency: simdb.DefaultLatency, Hook: func(st simdb.Statement) simdb.Fault {
			if faulty && !st.Write && r.Float64() < errProb {
				injected++
				return simdb.Fault{Err: errMS7}
			}
			return simdb.Fault{}
		}}
		s.Note("read errors %.0f%% until +20s, pool %d", 100*errProb, db.PoolSize)
		w, err := msOnePod(s, tables, db, relay.Config{})
		if err != nil {
			return err
		}
		if err := c.TrackAll(w); err != nil {
			return err
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
				change := relay.GrantMember
				if r.IntN(2) == 0 {
					change = relay.RemoveMember
				}
				_ = w.Write(ctx, pod, -1, change, msCommunity, msUser(1+r.IntN(nUsers)), msChannel(1+r.IntN(nChannels)))
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
					user := msUser(1 + r.IntN(nUsers))
					for range 1 + r.IntN(3) {
						_, err := w.IsMember(rctx, pod, cl, msCommunity, user, msChannel(1+r.IntN(nChannels)))
						switch {
						case errors.Is(err, errMS7):
							fig.failed++
						case errors.Is(err, context.DeadlineExceeded):
							fig.cancelled++
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
		// One cancellation is guaranteed in every seed, whatever the random
		// clients did: a cold load cancelled while its statement runs (the
		// statement takes at least 0.5 ms, the cancellation comes after
		// 0.1 ms). Its user is among the follow-ups below, which must then
		// proceed: the cancelled load released the user lock.
		cold := msUser(1)
		pod.MS.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: msCommunity, UserID: cold, ChannelID: msChannel(1)})
		cctx, ccancel := s.WithCancel(ctx)
		cancelled := s.NewEvent("cancelled-request")
		s.Go("cancelled-request", func() {
			defer cancelled.Set()
			_, err := w.IsMember(cctx, pod, 99, msCommunity, cold, msChannel(1))
			switch {
			case errors.Is(err, context.Canceled):
				fig.cancelled++
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
		before := countMS(w, pod)
		var stuck []string
		fwg := s.NewWaitGroup("follow-ups")
		fwg.Add(nUsers)
		for u := range nUsers {
			s.Go(fmt.Sprintf("follow-up-u%d", u+1), func() {
				defer fwg.Done()
				start := s.Elapsed()
				_, err := w.IsMember(ctx, pod, 100+u, msCommunity, msUser(u+1), msChannel(1+r.IntN(nChannels)))
				took := s.Elapsed() - start
				fig.followups++
				fig.slowest.Observe(took.Seconds(), func() string {
					return fmt.Sprintf("seed %#x: follow-up of u%d took %v (err %v)", s.Seed(), u+1, took, err)
				})
				if err != nil || took >= lockWait {
					stuck = append(stuck, fmt.Sprintf("u%d: took %v, err %v", u+1, took, err))
				}
			})
		}
		_ = fwg.Wait(ctx)
		d := countMS(w, pod).sub(before)
		// Wrong answers first: they are the claim's main failure.
		if err := stale.check(s.Seed(), w.History, w.Tracker.Truth()); err != nil {
			return err
		}
		if len(stuck) > 0 || d.waitTimeout > 0 {
			return fmt.Errorf("MS-7: after the faults, %d of %d follow-up requests did not proceed within LockWait %v (%s): %v", len(stuck), nUsers, lockWait, d, stuck)
		}
		if injected == 0 || fig.failed == 0 || fig.cancelled == 0 {
			return fmt.Errorf("MS-7: %d read failures were injected and clients saw %d of them and %d cancelled requests: failures must propagate, and the scenario must exercise both",
				injected, fig.failed, fig.cancelled)
		}
		return nil
	})
	var failed, cancelled, followups int64
	results.Each(func(_ uint64, f *seedFigures) {
		failed, cancelled, followups = failed+f.failed, cancelled+f.cancelled, followups+f.followups
	})
	slowest := claims.MaxOver(&results, func(f *seedFigures) claims.Max { return f.slowest })
	stale.report(t, sum.Seeds, sum.Failures, fmt.Sprintf(
		"one pod, reliable bus; %d injected read failures and %d cancelled requests seen by clients; %d follow-ups, slowest %v (must be < LockWait); staleness bound 0 = every answer true at some instant of its request",
		failed, cancelled, followups, secs(slowest.Value)))
}

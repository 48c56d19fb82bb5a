package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW7_AuditFindsLostAndLate checks TW-7 twice. World: the swarm world
// with the audit on in every thread; on correct code every pass's audit is
// clean (with a setter that shortens without re-arming, the TW-1 mutant,
// it reports late connections and this test fails). Injected: the cop's
// API cannot lose a connection, so the scenario does it the way a
// bookkeeping bug would, through the wheel's own Cancel and Schedule
// (netsim.Lose, netsim.Delay); the next pass's audit must report exactly
// the lost and late connections, count them, and go quiet once they are
// re-armed; and the harm is real: a lost connection is never timed out, a
// late one fires after its first tick.
func TestTW7_AuditFindsLostAndLate(t *testing.T) {
	var st tw7Stats
	var isum, wsum simtest.Summary
	var agg *twAgg
	t.Run("injected", func(t *testing.T) {
		isum = simtest.Run(t, simtest.Options{Seeds: twSeeds(10), Config: twSim}, func(s *sim.Sim) error { return tw7Inject(s, &st) })
	})
	t.Run("world", func(t *testing.T) {
		wsum, agg = worldTest(t, twSeeds(12), func(c *netsim.Config, _ *rand.Rand) {
			for i := range c.Threads {
				c.Threads[i].Cop.Audit = true
			}
		}, "TW-7")
	})
	ok := isum.Failures == 0 && wsum.Failures == 0 && st.rounds > 0
	claims.Report(t, claims.Record{
		ID: "TW-7", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("injected %d lost and %d late connections in %d rounds: the next pass's audit reported exactly them (audit_lost %d, audit_late %d) and was clean after the re-arm; %d lost connections never timed out past their deadline, %d late ones fired up to %v after their first tick; swarm worlds: %d audited passes clean (lost %d, late %d)",
			st.lost, st.late, st.rounds, st.lostCounted, st.lateCounted, st.neverFired, st.firedLate, st.worstLate, agg.st.AuditedPasses, agg.st.AuditLost, agg.st.AuditLate),
		Bound: "every lost or late connection reported by the next pass; none on correct code", Value: float64(agg.st.AuditLost + agg.st.AuditLate), Unit: "false reports", Seeds: isum.Seeds + wsum.Seeds,
		Witness: st.witness,
		Note:    "lost/late are injected through the wheel's public Cancel/Schedule on the connection's element (reached by reflection): the cop's API cannot break TW-1, by design",
	})
}

type tw7Stats struct {
	rounds, lost, late, lostCounted, lateCounted int64
	neverFired, firedLate                        int64
	worstLate                                    time.Duration
	witness                                      string
}

// tw7Inject is one injected seed.
func tw7Inject(s *sim.Sim, st *tw7Stats) error {
	ctx := context.Background()
	rnd := s.Rand()
	cfg := inactivitycop.DefaultConfig()
	cfg.Audit = true
	// The default ring: every deadline here is within it. (On a ring
	// shorter than a deadline, a pass may visit a late connection early,
	// when its slot comes round, and re-arm it: the wheel heals lateness,
	// never loss.)
	fired := map[uint64]time.Duration{}
	h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) { fired[to.Conn.ID()] = to.At.Sub(sim.Epoch) })
	if err != nil {
		return err
	}
	runCtx, stop := s.WithCancel(ctx)
	done := h.Start(runCtx)
	defer func() { stop(); _ = done.Wait(ctx) }()
	sleepTo := func(d time.Duration) { _ = s.Sleep(ctx, d-s.Elapsed()) }
	audit := func() (int64, int64) { m := h.Metrics(); return m.AuditLost.Value(), m.AuditLate.Value() }

	sleepTo(500 * time.Millisecond)
	var conns []*inactivitycop.Conn
	h.Do(func(cop *inactivitycop.Cop, now time.Time) {
		for range 200 + rnd.IntN(1800) {
			c := cop.Open()
			// Due after the last round (at most 32 s): an injected connection
			// that came due would be fired, not audited, by the next pass.
			_ = cop.SetInactivityTimeout(c, now, time.Duration(60+rnd.IntN(240))*time.Second)
			conns = append(conns, c)
		}
	})
	tick := time.Duration(1)
	for range 3 + rnd.IntN(4) {
		tick += time.Duration(1 + rnd.IntN(3))
		sleepTo(tick*time.Second + 500*time.Millisecond)
		l0, t0 := audit()
		pick := rnd.Perm(len(conns))[:2+rnd.IntN(9)]
		nLost := 1 + rnd.IntN(len(pick)-1)
		lost, late := pick[:nLost], pick[nLost:]
		var injErr error
		var want inactivitycop.Audit
		h.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			for _, i := range lost {
				injErr = cmpErr(injErr, netsim.Lose(cop, conns[i]))
			}
			for _, i := range late {
				injErr = cmpErr(injErr, netsim.Delay(cop, conns[i], time.Duration(1+rnd.IntN(60))*time.Second))
			}
			want = cop.Audit()
		})
		if injErr != nil {
			return injErr
		}
		if len(want.Lost) != len(lost) || len(want.Late) != len(late) {
			return fmt.Errorf("harness: injected %d lost and %d late, the explicit audit lists %d and %d", len(lost), len(late), len(want.Lost), len(want.Late))
		}
		sleepTo((tick+1)*time.Second + 500*time.Millisecond) // exactly one pass, at tick+1
		l1, t1 := audit()
		if l1-l0 != int64(len(lost)) || t1-t0 != int64(len(late)) {
			return fmt.Errorf("TW-7: after injecting %d lost and %d late connections (%v), the next pass's audit counted %d lost and %d late",
				len(lost), len(late), ids(conns, pick), l1-l0, t1-t0)
		}
		st.rounds++
		st.lost += int64(len(lost))
		st.late += int64(len(late))
		st.lostCounted += l1 - l0
		st.lateCounted += t1 - t0
		if st.witness == "" {
			st.witness = fmt.Sprintf("lost %v and late %v injected at %v: the pass at %v counted audit_lost +%d, audit_late +%d",
				ids(conns, lost), ids(conns, late), tick*time.Second+500*time.Millisecond, (tick+1)*time.Second, l1-l0, t1-t0)
		}
		for _, i := range pick { // repair: every setter re-arms
			if err := h.SetInactivityTimeout(conns[i], conns[i].InactivityTimeout()); err != nil {
				return err
			}
		}
		tick++
		sleepTo((tick+1)*time.Second + 500*time.Millisecond)
		if l2, t2 := audit(); l2 != l1 || t2 != t1 {
			return fmt.Errorf("TW-7: after re-arming the injected connections the audit still counted %d lost and %d late", l2-l1, t2-t1)
		}
		tick++
	}
	// The harm the audit exposes: a lost connection is never timed out, a
	// late one fires after the first tick following its deadline.
	gone, slow := conns[0], conns[1]
	var delay time.Duration
	var injErr error
	h.Do(func(cop *inactivitycop.Cop, now time.Time) {
		_ = cop.SetInactivityTimeout(gone, now, 1500*time.Millisecond)
		_ = cop.SetInactivityTimeout(slow, now, 1500*time.Millisecond)
		delay = time.Duration(2+rnd.IntN(5)) * time.Second
		injErr = cmpErr(netsim.Lose(cop, gone), netsim.Delay(cop, slow, delay))
	})
	if injErr != nil {
		return injErr
	}
	deadline := s.Elapsed() + 1500*time.Millisecond
	l0, _ := audit()
	sleepTo(deadline + delay + 3*time.Second)
	l1, _ := audit()
	firstTick := (deadline/time.Second + 1) * time.Second
	if at, ok := fired[gone.ID()]; ok {
		return fmt.Errorf("harness: the lost connection %d fired at %v", gone.ID(), at)
	}
	if l1-l0 < 2 {
		return fmt.Errorf("TW-7: a lost connection past its deadline was counted by %d passes' audits", l1-l0)
	}
	at, ok := fired[slow.ID()]
	if !ok || at <= firstTick {
		return fmt.Errorf("harness: the late connection %d fired at %v (fired %v), not after its first tick %v", slow.ID(), at, ok, firstTick)
	}
	st.neverFired++
	st.firedLate++
	st.worstLate = max(st.worstLate, at-firstTick)
	return nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func ids(conns []*inactivitycop.Conn, idx []int) []uint64 {
	out := make([]uint64, 0, len(idx))
	for _, i := range idx {
		out = append(out, conns[i].ID())
	}
	slices.Sort(out)
	return out
}

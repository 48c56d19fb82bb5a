package tw

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW7_AuditFindsInjected checks that the audit finds what it exists
// for. The cop's API cannot lose a connection, so the check does it the way
// a bookkeeping bug would, through the wheel's own Cancel and Schedule on
// the connection's element (netthreads.Lose, netthreads.Delay). The next
// pass's audit must count exactly the lost and late connections, and go
// quiet once they are re-armed. The harm is real, seen from the callbacks:
// a lost connection is never timed out, a late one fires after its first
// tick.
func TestTW7_AuditFindsInjected(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-7", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return auditInjected(s) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d injected lost or late connections: the next pass's audit missed or miscounted %d%s", o.Of, o.Wrong, failedText(o))
		},
		Note: "lost/late are injected through the wheel's public Cancel/Schedule on the connection's element (reached by reflection): the cop's API cannot break TW-1, by design",
	})
}

// TestTW7_AuditCleanInWorld runs the swarm world with the audit on in every
// thread: on correct code every pass's audit is clean (with a setter that
// shortens without re-arming, the TW-1 mutant, it counts late connections
// and this check fails).
func TestTW7_AuditCleanInWorld(t *testing.T) {
	names := metricNames(t)
	audited := func(c *netthreads.Config, _ *rand.Rand) {
		for i := range c.Threads {
			c.Threads[i].Cop.Audit = true
		}
	}
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-7", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{audited})
			if err != nil {
				return f, err
			}
			_, err = f.sample("TW-7", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-7", f.w.Stats().AuditedPasses)
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d audited passes; %d threads' audits reported lost or late connections on correct code%s", o.Of, o.Wrong, failedText(o))
		},
	})
}

// auditInjected is one injected seed.
func auditInjected(s *sim.Sim) (claims.Sample, error) {
	var smp claims.Sample
	ctx := context.Background()
	rnd := s.Rand()
	tick := claims.Get("TW-2", "tick").Duration()
	cfg := defaultCop()
	cfg.Audit = true
	// Every deadline here is within the default ring. (On a ring shorter
	// than a deadline, a pass may visit a late connection early, when its
	// slot comes round, and re-arm it: the wheel heals lateness, never
	// loss.)
	fired := map[uint64]time.Duration{}
	h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) { fired[to.Conn.ID()] = s.Elapsed() })
	if err != nil {
		return smp, err
	}
	runCtx, stop := s.WithCancel(ctx)
	done := h.Start(runCtx)
	defer func() { stop(); _ = done.Wait(ctx) }()
	sleepTo := func(d time.Duration) { _ = s.Sleep(ctx, d-s.Elapsed()) }
	audit := func() (int64, int64) { m := h.Metrics(); return m.AuditLost.Value(), m.AuditLate.Value() }
	wrong := func(format string, a ...any) (claims.Sample, error) {
		err := fmt.Errorf(format, a...)
		smp.Wrongly(func() string { return err.Error() })
		return smp, err
	}

	sleepTo(tick / 2)
	var conns []*inactivitycop.Conn
	h.Do(func(cop *inactivitycop.Cop, now time.Time) {
		for range 200 + rnd.IntN(1800) {
			c, _ := cop.Open(now)
			// Due after the last round (at most 32 s): an injected connection
			// that came due would be fired, not audited, by the next pass.
			_ = cop.SetInactivityTimeout(c, now, time.Duration(60+rnd.IntN(240))*tick)
			conns = append(conns, c)
		}
	})
	k := time.Duration(1)
	for range 3 + rnd.IntN(4) {
		k += time.Duration(1 + rnd.IntN(3))
		sleepTo(k*tick + tick/2)
		l0, t0 := audit()
		pick := rnd.Perm(len(conns))[:2+rnd.IntN(9)]
		nLost := 1 + rnd.IntN(len(pick)-1)
		lost, late := pick[:nLost], pick[nLost:]
		var injErr error
		var want inactivitycop.Audit
		h.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			for _, i := range lost {
				injErr = firstErr(injErr, netthreads.Lose(cop, conns[i]))
			}
			for _, i := range late {
				injErr = firstErr(injErr, netthreads.Delay(cop, conns[i], time.Duration(1+rnd.IntN(60))*tick))
			}
			want = cop.Audit()
		})
		if injErr != nil {
			return smp, injErr
		}
		if len(want.Lost) != len(lost) || len(want.Late) != len(late) {
			return smp, fmt.Errorf("harness: injected %d lost and %d late, the explicit audit lists %d and %d", len(lost), len(late), len(want.Lost), len(want.Late))
		}
		sleepTo((k+1)*tick + tick/2) // exactly one pass, at tick k+1
		l1, t1 := audit()
		smp.Of += int64(len(pick))
		if l1-l0 != int64(len(lost)) || t1-t0 != int64(len(late)) {
			return wrong("TW-7: after injecting %d lost and %d late connections (%v), the next pass's audit counted %d lost and %d late",
				len(lost), len(late), ids(conns, pick), l1-l0, t1-t0)
		}
		if smp.Witness == "" {
			smp.Witness = fmt.Sprintf("lost %v and late %v injected at +%v: the pass at +%v counted audit_lost +%d, audit_late +%d",
				ids(conns, lost), ids(conns, late), k*tick+tick/2, (k+1)*tick, l1-l0, t1-t0)
		}
		for _, i := range pick { // repair: every setter re-arms
			if err := h.SetInactivityTimeout(conns[i], conns[i].InactivityTimeout()); err != nil {
				return smp, err
			}
		}
		k++
		sleepTo((k+1)*tick + tick/2)
		if l2, t2 := audit(); l2 != l1 || t2 != t1 {
			return wrong("TW-7: after re-arming the injected connections the audit still counted %d lost and %d late", l2-l1, t2-t1)
		}
		k++
	}
	// The harm the audit exposes: a lost connection is never timed out, a
	// late one fires after the first tick following its deadline.
	gone, slow := conns[0], conns[1]
	var delay time.Duration
	var injErr error
	h.Do(func(cop *inactivitycop.Cop, now time.Time) {
		_ = cop.SetInactivityTimeout(gone, now, tick+tick/2)
		_ = cop.SetInactivityTimeout(slow, now, tick+tick/2)
		delay = time.Duration(2+rnd.IntN(5)) * tick
		injErr = firstErr(netthreads.Lose(cop, gone), netthreads.Delay(cop, slow, delay))
	})
	if injErr != nil {
		return smp, injErr
	}
	deadline := s.Elapsed() + tick + tick/2
	l0, _ := audit()
	sleepTo(deadline + delay + 3*tick)
	l1, _ := audit()
	firstTick := (deadline/tick + 1) * tick
	if at, ok := fired[gone.ID()]; ok {
		return smp, fmt.Errorf("harness: the lost connection %d fired at +%v", gone.ID(), at)
	}
	smp.Of += 2
	if l1-l0 < 2 {
		return wrong("TW-7: a lost connection past its deadline was counted by %d passes' audits", l1-l0)
	}
	if at, ok := fired[slow.ID()]; !ok || at <= firstTick {
		return smp, fmt.Errorf("harness: the late connection %d fired at +%v (fired %v), not after its first tick +%v", slow.ID(), at, ok, firstTick)
	}
	return smp, nil
}

func firstErr(a, b error) error {
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

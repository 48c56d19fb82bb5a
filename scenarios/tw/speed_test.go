package tw

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/model/baseline"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/sim"
)

// TestTW9_IdlePassSpeed measures, in one run, a pass over 100,000 idle
// connections (none due) three ways. The first is the wheel cop (the
// production configuration but a 2^20-bucket ring, so 500,000 timed ticks
// stay idle without resetting: an idle pass examines one bucket whatever
// the ring's size). The second is the full scan with the old cop's
// per-connection thread lookup and mutex try-lock on rt.Real()
// (baseline.FullScanLocked). The third is the lock-free full scan
// (model.FullScan, which understates the old cost). The exact
// counts come first: the wheel visits and looks up 0 connections per pass,
// both scans 100,000. Each figure is the best of five timed batches. It
// holds when the locked ratio reaches the claims table's speed-up.
// Sequential, in real time, outside the simulator.
func TestTW9_IdlePassSpeed(t *testing.T) {
	const n = 100_000
	b := claims.Get("TW-9", "pass speedup")
	origin := sim.Epoch
	cfg := defaultCop()
	cfg.Buckets = 1 << 20
	cop, err := inactivitycop.NewCop(cfg, origin)
	if err != nil {
		t.Fatal(err)
	}
	full := model.NewFullScan()
	locked, err := baseline.NewFullScanLocked(rt.Real())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d := time.Duration(1_000_000+i%1000) * time.Second // beyond every timed pass
		c, _ := cop.Open(origin)
		f, _ := full.Open(origin)
		err1 := cop.SetInactivityTimeout(c, origin, d)
		err2 := full.SetInactivityTimeout(f, origin, d)
		err3 := locked.SetInactivityTimeout(locked.Open(), origin, d)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
	}
	// Exact counts (TW-3), machine-independent.
	cop.Pass(origin) // tick 0: the wheel's first pass
	now := origin.Add(time.Second)
	wp, fp, lp := cop.Pass(now), full.Pass(now), locked.Pass(now)
	exact := wp.Visited == 0 && wp.Lookups == 0 && wp.Buckets == 1 && fp.Lookups == n && lp.Lookups == n && lp.Busy == 0
	if !exact {
		t.Errorf("TW-9: one idle pass over %d connections: wheel visited %d, lookups %d, buckets %d; full scan lookups %d; locked full scan lookups %d (busy %d); want 0, 0, 1, N, N, 0",
			n, wp.Visited, wp.Lookups, wp.Buckets, fp.Lookups, lp.Lookups, lp.Busy)
	}

	tick := 1
	wheelNs := bestOf(5, 100_000, func(passes int) {
		for range passes {
			tick++
			if p := cop.Pass(origin.Add(time.Duration(tick) * time.Second)); p.Visited != 0 {
				t.Fatalf("TW-9: the idle wheel pass at tick %d visited %d connections", tick, p.Visited)
			}
		}
	})
	fullNs := bestOf(5, 20, func(passes int) {
		for range passes {
			if p := full.Pass(now); p.Fired != 0 {
				t.Fatal("TW-9: a connection came due in the full scan")
			}
		}
	})
	lockedNs := bestOf(5, 10, func(passes int) {
		for range passes {
			if p := locked.Pass(now); p.Fired != 0 {
				t.Fatal("TW-9: a connection came due in the locked full scan")
			}
		}
	})
	lockedRatio, fullRatio := lockedNs/wheelNs, fullNs/wheelNs
	fast := b.Holds(lockedRatio)
	verdict := findings.Verdict(exact && fast)
	note := "same run, best of 5 batches each; GOMAXPROCS and load affect the ns, the ratio is the claim"
	if raceEnabled {
		verdict = findings.Verdict(exact)
		note += "; race detector on: the speed verdict is not judged, only the exact counts"
	} else if !fast {
		t.Errorf("TW-9: the locked full scan takes %.0f ns per pass, the wheel %.1f ns: %.0fx, below the claims table's %s", lockedNs, wheelNs, lockedRatio, b)
	}
	findings.Report(t, findings.Record{
		ID: "TW-9", Verdict: verdict,
		Measured: fmt.Sprintf("a pass over 100,000 idle connections: locked full scan %.0f µs, lock-free full scan %.0f µs, wheel %.1f ns: %.0fx against the locked scan (%.0fx against the lock-free one); lookups per pass %d / %d / %d",
			lockedNs/1000, fullNs/1000, wheelNs, lockedRatio, fullRatio, lp.Lookups, fp.Lookups, wp.Lookups),
		Bound: b.String() + " (seed: ~15.9 ms vs ~0.1 µs)", BoundName: b.Name, BoundValue: b.Value, Value: lockedRatio, Unit: string(b.Unit), Seeds: 1,
		Note: note,
	})
}

// bestOf returns the fastest of rounds timed batches, in nanoseconds per
// pass. The batch size grows tenfold from one pass until a batch takes at
// least 10 ms or reaches maxPasses, so a slow contender costs a few
// batches, not maxPasses of them.
func bestOf(rounds, maxPasses int, batch func(passes int)) float64 {
	timed := func(passes int) float64 {
		start := time.Now() //windtunnel:realtime TW-9's wall-clock ratio, outside the simulator
		batch(passes)
		return float64(time.Since(start).Nanoseconds()) //windtunnel:realtime
	}
	passes := 1
	for passes < maxPasses && timed(passes) < float64(10*time.Millisecond) {
		passes = min(10*passes, maxPasses)
	}
	best := 0.0
	for range rounds {
		if ns := timed(passes) / float64(passes); best == 0 || ns < best {
			best = ns
		}
	}
	return best
}

package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
)

// tw9Goal is the speed-up TW-9 must show against the locked full scan: the
// seed's ~15.9 ms against ~0.1 µs is about 160,000x; 10,000x is the floor.
const tw9Goal = 10_000

// TestTW9_IdlePassSpeed measures, in one run, a pass over 100,000 idle
// connections (none due) three ways: the wheel cop (the default
// configuration, one empty bucket per pass), the full scan with the old
// cop's per-connection thread lookup and mutex try-lock on rt.Real()
// (model.FullScanLocked, the baseline), and the lock-free full scan
// (model.FullScan, which understates the old cost). The exact counts come
// first: the wheel visits and looks up 0 connections per pass, both scans
// 100,000. Each figure is the best of five timed batches (a batch of wheel
// passes runs at successive ticks; a 2^20-bucket ring keeps 500,000 ticks
// idle without resetting: an idle pass examines one bucket whatever the
// ring's size). It holds when the locked ratio is at least 10,000x.
func TestTW9_IdlePassSpeed(t *testing.T) {
	const n = 100_000
	origin := sim.Epoch
	cfg := inactivitycop.DefaultConfig()
	cfg.Buckets = 1 << 20
	cop, err := inactivitycop.NewCop(cfg, origin)
	if err != nil {
		t.Fatal(err)
	}
	full := model.NewFullScan()
	locked, err := model.NewFullScanLocked(rt.Real())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d := time.Duration(1_000_000+i%1000) * time.Second // beyond every timed pass
		err1 := cop.SetInactivityTimeout(cop.Open(), origin, d)
		err2 := full.SetInactivityTimeout(full.Open(), origin, d)
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
	fast := lockedRatio >= tw9Goal
	verdict := claims.Verdict(exact && fast)
	note := "same run, best of 5 batches each; GOMAXPROCS and load affect the ns, the ratio is the claim"
	if twRace {
		verdict = claims.Verdict(exact)
		note += "; race detector on: the speed verdict is not judged, only the exact counts"
	} else if !fast {
		t.Errorf("TW-9: the locked full scan takes %.0f ns per pass, the wheel %.1f ns: %.0fx, below the %dx goal", lockedNs, wheelNs, lockedRatio, tw9Goal)
	}
	claims.Report(t, claims.Record{
		ID: "TW-9", Verdict: verdict,
		Measured: fmt.Sprintf("a pass over 100,000 idle connections: locked full scan %.0f µs, lock-free full scan %.0f µs, wheel %.1f ns: %.0fx against the locked scan (%.0fx against the lock-free one); lookups per pass %d / %d / %d",
			lockedNs/1000, fullNs/1000, wheelNs, lockedRatio, fullRatio, lp.Lookups, fp.Lookups, wp.Lookups),
		Bound: fmt.Sprintf(">= %dx (seed: ~15.9 ms vs ~0.1 µs)", tw9Goal), Value: lockedRatio, Unit: "x", Seeds: 1,
		Note: note,
	})
}

// bestOf returns the fastest of rounds timed batches, in nanoseconds per
// pass. The batch size grows tenfold from one pass until a batch takes at
// least 10 ms or reaches maxPasses, so a slow contender costs a few batches,
// not maxPasses of them.
func bestOf(rounds, maxPasses int, batch func(passes int)) float64 {
	timed := func(passes int) float64 {
		start := time.Now()
		batch(passes)
		return float64(time.Since(start).Nanoseconds())
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

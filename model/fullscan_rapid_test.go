package model_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

const ms = time.Millisecond

// TW-1, TW-2, TW-5: with a budget no pass can exhaust, the wheel cop fires
// exactly the timeouts the full-scan cop fires, at the same passes. Ops run
// at arbitrary millisecond instants but often exactly on the grid. So real
// deadlines often fall exactly on a pass instant while the wheel holds an
// earlier one. That is the fire-on-<= boundary: a setter just before a grid
// instant g, activity at g, and passes at every tick until g+timeout. The
// ring is 8 s; timeouts reach 40 s and stalls skip up to 20 passes.
func TestWheelCopMatchesFullScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := inactivitycop.DefaultConfig()
		cfg.Buckets = 8
		if rapid.Bool().Draw(t, "small queue") { // TW-10: opening evicts the least recently active
			cfg.MaxConns = rapid.IntRange(1, 6).Draw(t, "max conns")
		}
		w, err := newTwin(cfg)
		must(t, err)
		timeout := func() time.Duration {
			if rapid.Bool().Draw(t, "whole") { // short, so the grid is hit while we run
				return time.Duration(rapid.IntRange(0, 10).Draw(t, "s")) * time.Second
			}
			return time.Duration(rapid.IntRange(0, 40_000).Draw(t, "ms")) * ms
		}
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			if len(w.conns) == 0 {
				must(t, w.open())
			}
			pick := func() int { return rapid.IntRange(0, len(w.conns)-1).Draw(t, "conn") }
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				must(t, w.open())
			case 1:
				must(t, w.setInactivity(pick(), timeout()))
			case 2:
				must(t, w.setActive(pick(), timeout()))
			case 3, 4:
				w.activity(pick())
			case 5:
				if rapid.IntRange(0, 3).Draw(t, "close?") == 0 {
					w.close(pick())
				}
			case 6: // time passes inside the tick
				step := rapid.SampledFrom([]time.Duration{0, ms, 250 * ms, 500 * ms, 999 * ms}).Draw(t, "wait")
				if next := w.now.Add(step); next.Before(w.grid.Add(w.tick)) {
					w.now = next
				}
			default:
				must(t, w.pass(rapid.SampledFrom([]int{1, 1, 1, 1, 1, 1, 2, 3, 9, 20}).Draw(t, "ticks")))
			}
			must(t, w.check())
		}
	})
}

// TW-2, TW-4: with budgets of 1..4 connections a busy pass continues 1 ms
// later until done. The chain fires exactly what the full scan fires at the
// pass instant, none early. Ops run 50 ms past a multiple of 100 ms and
// timeouts are multiples of 100 ms, so no deadline falls inside a chain. (A
// continuation at p+c ms would rightly fire a deadline in [p, p+c ms) that
// the full scan only sees a tick later.) A chain lasts under 50 ms as long as
// it visits a connection at most once per bucket it examines; twin.pass
// enforces that. Timeouts of up to 40 s on an 8-bucket ring wrap, so a chain
// can meet a connection again in a bucket it reaches later (TW-5).
func TestWheelCopMatchesFullScanWithBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := inactivitycop.DefaultConfig()
		cfg.Buckets = 8
		cfg.Budget = rapid.IntRange(1, 4).Draw(t, "budget")
		w, err := newTwin(cfg)
		must(t, err)
		w.now = origin.Add(50 * ms)
		timeout := func() time.Duration {
			return time.Duration(rapid.IntRange(0, 400).Draw(t, "x100ms")) * 100 * ms
		}
		for range rapid.IntRange(1, 150).Draw(t, "steps") {
			if len(w.conns) == 0 {
				must(t, w.open())
			}
			pick := func() int { return rapid.IntRange(0, len(w.conns)-1).Draw(t, "conn") }
			switch rapid.IntRange(0, 7).Draw(t, "op") {
			case 0: // a burst with one deadline
				d := timeout()
				// At most 40 connections: a chain then lasts under 50 ms.
				for range min(rapid.IntRange(1, 8).Draw(t, "burst"), 40-len(w.conns)) {
					must(t, w.open())
					must(t, w.setInactivity(len(w.conns)-1, d))
				}
			case 1:
				must(t, w.setInactivity(pick(), timeout()))
			case 2:
				must(t, w.setActive(pick(), timeout()))
			case 3, 4:
				w.activity(pick())
			case 5:
				if rapid.IntRange(0, 3).Draw(t, "close?") == 0 {
					w.close(pick())
				}
			case 6:
				j := rapid.IntRange(0, 9).Draw(t, "slot")
				if next := w.grid.Add(time.Duration(j)*100*ms + 50*ms); next.After(w.now) {
					w.now = next
				}
			default:
				must(t, w.pass(rapid.SampledFrom([]int{1, 1, 1, 1, 2, 3, 9, 20}).Draw(t, "ticks")))
				w.now = w.grid.Add(50 * ms)
			}
			must(t, w.check())
		}
	})
}

func must(t *rapid.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The twin's checks can fail: a step applied to one cop only (a stand-in
// for a broken cop) is reported, as a deadline mismatch by check and as a
// different set of timeouts by pass.
func TestTwinReportsDivergence(t *testing.T) {
	w, err := newTwin(inactivitycop.DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, w.open())
	require.NoError(t, w.setInactivity(0, 5*time.Second))
	w.now = origin.Add(3 * time.Second)
	w.ref.NetActivity(w.refs[0], w.now) // the reference sees activity the cop missed
	assert.ErrorContains(t, w.check(), "conn 1: wheel cop deadline 5s")
	assert.ErrorContains(t, w.pass(6), "TW-2: at 6s the full scan fired [], the wheel [conn 1 inactivity@5s]")

	w2, err := newTwin(inactivitycop.DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, w2.open())
	_, _ = w2.ref.Open(origin) // ids now diverge
	assert.ErrorContains(t, w2.open(), "ids diverge")
}

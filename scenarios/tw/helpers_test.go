package tw

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
)

// twSim is the simulator configuration of the TW worlds: pauses longer
// than a 4,096 s ring and the drain past the longest timeout need more than
// the default 24 h of virtual time.
var twSim = sim.Config{MaxVirtual: 72 * time.Hour}

// seeds is a check's default seed count: n, or a quarter of it (at least
// 2) under the race detector, which slows a world about tenfold.
// -sim.seeds overrides both.
func seeds(n int) int {
	if raceEnabled {
		return max(2, n/4)
	}
	return n
}

// limits are the table's numbers the timeout checkers compare with.
func limits() checks.TimeoutLimits {
	return checks.TimeoutLimits{Tick: claims.Get("TW-2", "tick").Duration(), Continuation: claims.Get("TW-4", "continuation").Duration()}
}

// The seed's counters (series.Table), by what they count, and the
// project's own three, which the seed does not name.
const (
	seriesPasses    = "inactivity_cop_passes"
	seriesVisited   = "inactivity_cop_visited"
	seriesFired     = "inactivity_cop_fired"
	seriesPassTime  = "inactivity_cop_pass_time_us"
	seriesPassMax   = "inactivity_cop_pass_max_us"
	seriesExhausted = "inactivity_cop_budget_exhausted"
	seedFamily      = "inactivity_cop"

	ownLookups   = "inactivity_cop_lookups"
	ownEvicted   = "inactivity_cop_evicted"
	ownAuditLost = "inactivity_cop_audit_lost"
	ownAuditLate = "inactivity_cop_audit_late"
)

// metricNames returns the names the checkers read, after checking that the
// harness's six are exactly the series the claims table names for TW-8.
func metricNames(t testing.TB) checks.CopMetricNames {
	t.Helper()
	named := series.Of(seedFamily)
	ours := []string{seriesPasses, seriesVisited, seriesFired, seriesPassTime, seriesPassMax, seriesExhausted}
	slices.Sort(named)
	slices.Sort(ours)
	if !slices.Equal(named, ours) {
		t.Fatalf("TW-8: the harness counts %v, the claims table names %v", ours, named)
	}
	return checks.CopMetricNames{Passes: seriesPasses, Visited: seriesVisited, Fired: seriesFired, PassTimeUS: seriesPassTime,
		PassMaxUS: seriesPassMax, BudgetExhausted: seriesExhausted, Lookups: ownLookups, Evicted: ownEvicted, AuditLost: ownAuditLost, AuditLate: ownAuditLate}
}

// The probes the checks count from what the checkers measured (the world
// counts its own, netthreads.Probe*).
const (
	probeContinued = "tw/pass-hit-the-budget-and-continued"
	probeOnTick    = "tw/deadline-on-a-pass-instant"
)

// flown is one swarm world flown to its end and judged: the world's own
// violations and the checkers' over its history, with the figures.
type flown struct {
	w        *netthreads.World
	cfg      netthreads.Config
	vs       checks.Violations
	fig      checks.TimeoutFigures
	catchUps []checks.CatchUp
}

// tweak adjusts a world drawn by netthreads.Swarm.
type tweak func(c *netthreads.Config, rnd *rand.Rand)

// fly draws a world from the seed (netthreads.Swarm: net threads with rings
// of 16, 64 or 4,096 buckets, budgets of 16 to 4,096, bursts larger than
// the budget, pauses and clock jumps longer than the ring). It lets the
// tweaks adjust it, flies it to the end and judges its history with the
// table's numbers. A world violation of one of failFast ends the run at
// once.
func fly(s *sim.Sim, names checks.CopMetricNames, tweaks []tweak, failFast ...string) (*flown, error) {
	cfg := netthreads.Swarm(s.Rand())
	for _, tw := range tweaks {
		tw(&cfg, s.Rand())
	}
	w, err := netthreads.New(s, cfg)
	if err != nil {
		return nil, err
	}
	w.FailFast(failFast...)
	if err := w.Run(); err != nil {
		return nil, err
	}
	f := &flown{w: w, cfg: cfg}
	f.vs.PerClaim = 4
	for _, v := range w.Violations() {
		f.vs.Add(v.Claim, v.At, "%s", v.Msg)
	}
	lim := limits()
	for _, h := range w.History() {
		g := checks.CheckTimeouts(h, lim, &f.vs)
		checks.CheckCopMetrics(h, names, &f.vs)
		for _, cu := range h.CatchUps {
			if err := cu.Check(); err != nil {
				f.vs.Add("TW-5", cu.At, "%v", err)
			}
		}
		f.catchUps = append(f.catchUps, h.CatchUps...)
		f.fig.Matched += g.Matched
		f.fig.Aligned += g.Aligned
		f.fig.Long += g.Long
		f.fig.Paused += g.Paused
		f.fig.Evicted += g.Evicted
		f.fig.Continued += g.Continued
		if g.MaxLag > f.fig.MaxLag {
			f.fig.MaxLag, f.fig.LagWitness = g.MaxLag, g.LagWitness
		}
		if g.MaxLate > f.fig.MaxLate {
			f.fig.MaxLate, f.fig.LateWitness = g.MaxLate, g.LateWitness
		}
		if g.Matched > 0 && (f.fig.Matched == g.Matched || g.MinMargin < f.fig.MinMargin) {
			f.fig.MinMargin = g.MinMargin
		}
		for range g.Continued {
			s.Probe(probeContinued)
		}
		for range g.Aligned {
			s.Probe(probeOnTick)
		}
	}
	return f, nil
}

// sample is a zero-wrong claim's figure of one world: the observations and
// the claim's violations, the first as the witness. The error fails the
// seed.
func (f *flown) sample(claim string, of int64) (claims.Sample, error) {
	smp := claims.Sample{Of: of, Wrong: int64(f.vs.Count(claim))}
	if err := f.vs.Err(claim); err != nil {
		smp.Witness = err.Error()
		return smp, err
	}
	return smp, nil
}

// pausesBeyondTheRing makes every world pause twice for longer than its
// longest ring, the second time restarting off the tick grid (a clock jump
// longer than the ring).
func pausesBeyondTheRing(c *netthreads.Config, rnd *rand.Rand) {
	ring := c.MaxRing()
	long := func() time.Duration { return ring + ring/2 + time.Duration(rnd.Int64N(int64(ring))) }
	c.SetPauses(rnd, []time.Duration{long(), long()}, []bool{false, true})
}

// pausesAtTheRing makes every world pause twice at TW-5's boundary, for the
// ring of one of its threads drawn at random. It pauses once for one tick
// more than the ring, the shortest pause the fast-forward must shorten. It
// pauses once for exactly the ring, the longest the catch-up walks whole,
// restarting off the tick grid half the time. A thread with another ring
// catches up after a pause shorter or longer than its own.
func pausesAtTheRing(c *netthreads.Config, rnd *rand.Rand) {
	ring := int64(c.Threads[rnd.IntN(len(c.Threads))].Cop.Buckets)
	c.SetPausesInTicks(rnd, []int64{ring + 1, ring}, []bool{false, rnd.IntN(2) == 0})
}

// pausesOfAFewTicks makes every world pause three times for a few ticks:
// for two and for three missed ticks restarting exactly on the tick grid,
// and for one to four restarting on it or 1 ns past it, in an order drawn
// from the seed. The pass after each lands on the start of a tick two or
// three past the cursor's, or next to it: a catch-up must take in the tick
// that has just begun, and a pass that reckons which ticks have begun from
// the cursor has its edges there. Pauses about a ring long never land on
// them, and a cop that passes every tick lands one tick past its cursor.
func pausesOfAFewTicks(c *netthreads.Config, rnd *rand.Rand) {
	ticks := []int64{2, 3, 1 + rnd.Int64N(4)}
	offsets := []time.Duration{0, 0, time.Duration(rnd.IntN(2))}
	rnd.Shuffle(len(ticks), func(i, j int) {
		ticks[i], ticks[j] = ticks[j], ticks[i]
		offsets[i], offsets[j] = offsets[j], offsets[i]
	})
	c.SetPausesAt(rnd, ticks, offsets)
}

// oneBurstThread makes the first thread a burst thread (a budget of 16 to
// 128, bursts larger than it), so that every world continues passes.
func oneBurstThread(c *netthreads.Config, rnd *rand.Rand) {
	if t := &c.Threads[0]; t.Aligned {
		t.Aligned, t.Cop.Budget = false, 16<<rnd.IntN(4)
	}
	least := c.Threads[0].Cop.Budget
	for _, t := range c.Threads {
		least = min(least, t.Cop.Budget)
	}
	c.BurstMax = max(4, 3*least)
}

// oneAlignedThread makes the last thread aligned (deadlines exactly on
// ticks, a budget no pass exhausts).
func oneAlignedThread(c *netthreads.Config, _ *rand.Rand) {
	t := &c.Threads[len(c.Threads)-1]
	t.Aligned = true
	t.Cop.Budget = max(t.Cop.Budget, 2*c.MaxConns)
}

// quiet is where scripted operations may not fall: the first 300 ms of a
// tick belong to its pass and continuations.
const quiet = 300 * time.Millisecond

// offGrid returns a random instant in tick k, outside its quiet window.
func offGrid(rnd *rand.Rand, k int64) time.Duration {
	return time.Duration(k)*time.Second + quiet + time.Duration(rnd.Int64N(int64(time.Second-quiet)))
}

// predictAll runs checks.PredictCop for every scripted connection, on the
// table's tick, and returns the expected visits and timeouts per thread
// (Conn is the script index + 1).
func predictAll(ring, threads int, conns []netthreads.ScriptConn, until time.Duration) ([]int64, [][]checks.TimeoutEvent, error) {
	tick := claims.Get("TW-2", "tick").Duration()
	visits := make([]int64, threads)
	fired := make([][]checks.TimeoutEvent, threads)
	for i, c := range conns {
		p, err := checks.PredictCop(int64(ring), tick, c.Ops, until)
		if err != nil {
			return nil, nil, err
		}
		visits[c.Thread] += int64(p.Visits)
		for _, f := range p.Fired {
			f.Conn = uint64(i + 1)
			fired[c.Thread] = append(fired[c.Thread], f)
		}
	}
	return visits, fired, nil
}

func sortEvents(ts []checks.TimeoutEvent) []checks.TimeoutEvent {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b checks.TimeoutEvent) int {
		return cmp.Or(cmp.Compare(a.Conn, b.Conn), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Deadline, b.Deadline), cmp.Compare(a.At, b.At))
	})
	return ts
}

// sameTimeouts compares fired timeouts with predicted ones, exactly.
func sameTimeouts(claim string, thread int, got, want []checks.TimeoutEvent) error {
	g, w := sortEvents(got), sortEvents(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Errorf("%s: thread %d: fired %v, predicted %v", claim, thread, g[i], w[i])
		}
	}
	if len(g) != len(w) {
		return fmt.Errorf("%s: thread %d: fired %d timeouts, predicted %d", claim, thread, len(g), len(w))
	}
	return nil
}

// defaultCop is the production configuration under test, what a service
// gets from inactivitycop.DefaultConfig(): the world runs it, and its tick,
// budget and continuation are what the checks measure against the claims
// table; no expectation is read from it.
func defaultCop() inactivitycop.Config { return inactivitycop.DefaultConfig() }

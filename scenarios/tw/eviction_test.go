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

// smallQueues gives every thread a queue of a half to nine tenths of the
// connections it opens at the start, so that openings evict throughout the
// run. For the smallest draws (about one thread in ten to thirty) it gives a
// queue of 4 to 19, so that a shrinker that makes the draw smaller finds a
// counterexample with a handful of openings: the smallest draw is a
// queue of 4. One draw per thread either way.
func smallQueues(c *netthreads.Config, rnd *rand.Rand) {
	const tiny = 16
	for i := range c.Threads {
		v := rnd.IntN(c.Conns*2/5 + 1 + tiny)
		if v < tiny {
			c.Threads[i].Cop.MaxConns = 4 + v
			continue
		}
		c.Threads[i].Cop.MaxConns = max(4, c.Conns/2+v-tiny)
	}
}

// TestTW10_EvictionInWorlds checks TW-10 in the swarm world with small
// connection queues, against the full-scan reference extended the same
// way (model.FullScanQueue, the same limit, mirrored at the same
// instants). The wheel cop's handler is told of every connection the
// reference evicts exactly once, at the same opening, in the same order
// (least recently active first). The connection is closed and out of the
// wheel right after, and nothing of it fires later. inactivity_cop_evicted
// counts the evictions. All the other timeouts stay the reference's (TW-2's
// differential).
func TestTW10_EvictionInWorlds(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-10", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{smallQueues}, "TW-10")
			if err != nil {
				return f, err
			}
			if _, err := f.sample("TW-10", 0); err != nil {
				return f, err
			}
			_, err = f.sample("TW-2", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-10", int64(f.fig.Evicted))
			smp.Wrong += int64(f.vs.Count("TW-2"))
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d evictions from full queues matched with the reference's; %d reported otherwise than once, in the documented order, at the opening, or fired again (or timeouts differed)%s", o.Of, o.Wrong, failedText(o))
		},
		Probes: []claims.Probe{
			{Name: netthreads.ProbeEvicted, What: "a connection evicted from a full queue", Min: 100},
			{Name: netthreads.ProbeEvictedArmed, What: "an evicted connection had a deadline armed (left in the wheel, it would fire later)", Min: 50},
		},
	})
}

// TestTW10_EvictionOrderDirected opens connections on one handler of the
// production configuration with a queue of 8 to 32, and makes activity on
// some of them. It keeps its own list of the documented order (least
// recently active first: an opening or a NetActivity moves a connection to
// the end; a setter does not). Every connection is armed with a timeout
// that comes due soon. Each further opening must evict exactly the first
// of the list. Its handler is told once, from inside that Open, with an
// Evicted timeout.
// It is closed and out of the wheel, and inactivity_cop_evicted counts it.
// No callback comes for it afterwards, though its old deadline passes.
func TestTW10_EvictionOrderDirected(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-10", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return evictInOrder(s) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d evictions: %d were not the least recently active connection, reported once from its Open, closed, out of the wheel, counted, and silent afterwards%s", o.Of, o.Wrong, failedText(o))
		},
	})
}

func evictInOrder(s *sim.Sim) (claims.Sample, error) {
	var smp claims.Sample
	ctx := context.Background()
	rnd := s.Rand()
	tick := claims.Get("TW-2", "tick").Duration()
	limit := 8 + rnd.IntN(25)
	cfg := defaultCop()
	cfg.MaxConns = limit
	type report struct {
		id     uint64
		kind   inactivitycop.Kind
		inOpen bool
		closed bool
	}
	var reports []report
	opening := false
	h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) {
		reports = append(reports, report{id: to.Conn.ID(), kind: to.Kind, inOpen: opening, closed: to.Conn.Closed()})
	})
	if err != nil {
		return smp, err
	}
	defer runHandler(s, h)()
	wrong := wrongTW10(&smp)
	var order []*inactivitycop.Conn // the documented order: least recently active first
	touch := func(c *inactivitycop.Conn) {
		if i := slices.Index(order, c); i >= 0 {
			order = append(order[:i], order[i+1:]...)
		}
		order = append(order, c)
	}
	open := func() (*inactivitycop.Conn, []report) {
		n := len(reports)
		opening = true
		c := h.Open()
		opening = false
		return c, slices.Clone(reports[n:])
	}
	evicted := map[uint64]bool{}
	_ = s.Sleep(ctx, tick/2)
	for range limit {
		c, rs := open()
		if len(rs) != 0 {
			return wrong("opening connection %d of a queue of %d reported %v", c.ID(), limit, rs)
		}
		touch(c)
		// Due in 3 to 6 ticks: an evicted connection left in the wheel fires.
		if err := h.SetInactivityTimeout(c, time.Duration(3+rnd.IntN(4))*tick+time.Duration(rnd.Int64N(int64(tick/2)))); err != nil {
			return smp, err
		}
	}
	for round := range 3 * limit {
		_ = s.Sleep(ctx, time.Duration(1+rnd.IntN(40))*time.Millisecond)
		for range rnd.IntN(3) { // activity reorders; a setter does not
			c := order[rnd.IntN(len(order))]
			if rnd.IntN(3) == 0 {
				if err := h.SetActiveTimeout(c, time.Duration(4+rnd.IntN(4))*tick); err != nil {
					return smp, err
				}
				continue
			}
			h.NetActivity(c)
			touch(c)
		}
		want := order[0]
		c, rs := open()
		smp.Of++
		switch {
		case len(rs) != 1:
			return wrong("opening connection %d (round %d) into a full queue of %d reported %d events %v, want one eviction of connection %d", c.ID(), round, limit, len(rs), rs, want.ID())
		case rs[0].kind != inactivitycop.Evicted || rs[0].id != want.ID():
			return wrong("opening connection %d evicted connection %d (%v), the least recently active is %d (order %v)", c.ID(), rs[0].id, rs[0].kind, want.ID(), idsOf(order))
		case !rs[0].inOpen || !rs[0].closed:
			return wrong("connection %d's eviction was reported outside its Open (%v) or before it was closed (%v)", want.ID(), rs[0].inOpen, rs[0].closed)
		}
		var held bool
		h.Do(func(*inactivitycop.Cop, time.Time) { _, held = want.WheelDeadline() })
		if held {
			return wrong("evicted connection %d is still in the wheel", want.ID())
		}
		evicted[want.ID()] = true
		order = order[1:]
		touch(c)
		if err := h.SetInactivityTimeout(c, time.Duration(3+rnd.IntN(4))*tick); err != nil {
			return smp, err
		}
	}
	_ = s.Sleep(ctx, 10*tick) // every old deadline passes
	count := 0
	for _, r := range reports {
		if !evicted[r.id] {
			continue
		}
		if r.kind != inactivitycop.Evicted {
			return wrong("evicted connection %d fired again: %v", r.id, r.kind)
		}
		count++
	}
	if count != len(evicted) {
		return wrong("%d eviction events for %d evicted connections", count, len(evicted))
	}
	if got := h.Metrics().Evicted.Value(); got != int64(len(evicted)) {
		return wrong("inactivity_cop_evicted is %d, %d connections were evicted", got, len(evicted))
	}
	return smp, nil
}

// TestTW10_EvictionDuringAPassDirected reaches on purpose what
// TestHandlerRealEviction met with real goroutines under load, and the
// swarm world never does (it opens off the pass instants): an eviction
// between a pass that fired the connection and that pass's reports. Each
// round arms every connection of a full queue to come due just before a
// pass instant P, and at exactly P the main task opens one more, while the
// cop task passes: whichever runs first, the least recently active
// connection is evicted. When the pass has fired it and released the lock
// but not yet reported, the eviction is reported first and the pass's
// timeout after it (ProbeReportedAfterEviction). Judged from outside: each
// eviction is reported once, from its Open, closed and out of the wheel,
// counted; and no timeout of an evicted connection fired after its eviction,
// by the instants read under the lock (Timeout.At), whatever order the
// reports came in. A connection left in the wheel fires at a later pass.
func TestTW10_EvictionDuringAPassDirected(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-10", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return evictDuringPasses(s) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d evictions at a pass instant: %d were reported otherwise than once from their Open, left open, in the wheel or uncounted, or had a timeout fire after them%s", o.Of, o.Wrong, failedText(o))
		},
		Probes: []claims.Probe{
			{Name: netthreads.ProbeReportedAfterEviction, What: "a pass's timeout of a connection reported after its eviction was (the pass fired it first, and reports after releasing the lock)", Min: 5},
		},
	})
}

// evictDuringPassesRounds is how many pass instants evictDuringPasses
// opens at.
const evictDuringPassesRounds = 8

func evictDuringPasses(s *sim.Sim) (claims.Sample, error) {
	var smp claims.Sample
	ctx := context.Background()
	rnd := s.Rand()
	tick := claims.Get("TW-2", "tick").Duration()
	limit := 4 + rnd.IntN(8)
	cfg := defaultCop()
	cfg.MaxConns = limit
	type report struct {
		to     inactivitycop.Timeout
		inOpen bool
		closed bool
	}
	var reports []report
	evictedAt := map[uint64]int{} // a connection's eviction: its index in reports
	opening := false
	// The handler's log has a lock of its own, as it would with real
	// goroutines (TestHandlerRealEviction's): taking it is where a pass's
	// reports give way to other tasks, an Open among them.
	logMu := s.NewMutex("log")
	h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) {
		logMu.Lock()
		defer logMu.Unlock()
		if _, gone := evictedAt[to.Conn.ID()]; gone && to.Kind != inactivitycop.Evicted {
			s.Probe(netthreads.ProbeReportedAfterEviction)
		}
		if to.Kind == inactivitycop.Evicted {
			evictedAt[to.Conn.ID()] = len(reports)
		}
		reports = append(reports, report{to: to, inOpen: opening, closed: to.Conn.Closed()})
	})
	if err != nil {
		return smp, err
	}
	origin := s.Now()
	defer runHandler(s, h)()
	wrong := wrongTW10(&smp)
	until := func(at time.Time) { _ = s.Sleep(ctx, at.Sub(s.Now())) }
	var order []*inactivitycop.Conn // least recently active first
	until(origin.Add(tick / 2))
	for range limit {
		order = append(order, h.Open())
	}
	for round := range evictDuringPassesRounds {
		pass := origin.Add(time.Duration(2*round+2) * tick)
		until(pass.Add(-tick / 2))
		// Due in the last half tick before the pass: it fires them all.
		for _, c := range order {
			d := tick/4 + time.Duration(rnd.Int64N(int64(tick/5)))
			if err := h.SetInactivityTimeout(c, d); err != nil {
				return smp, err
			}
		}
		until(pass)
		want := order[0]
		n := len(reports)
		opening = true
		c := h.Open()
		opening = false
		smp.Of++
		// The pass's reports may come while the Open waits for the lock:
		// only evictions are the Open's.
		var rs []report
		for _, r := range reports[n:] {
			if r.to.Kind == inactivitycop.Evicted {
				rs = append(rs, r)
			}
		}
		switch {
		case len(rs) != 1 || rs[0].to.Conn != want || !rs[0].inOpen:
			ids := make([]uint64, len(rs))
			for i, r := range rs {
				ids[i] = r.to.Conn.ID()
			}
			return wrong("round %d: opening connection %d at the pass instant %v reported the eviction of connections %v, want connection %d's alone, from inside the Open", round, c.ID(), pass.Sub(origin), ids, want.ID())
		case !rs[0].closed:
			return wrong("round %d: connection %d's eviction was reported before it was closed", round, want.ID())
		}
		var held bool
		h.Do(func(*inactivitycop.Cop, time.Time) { _, held = want.WheelDeadline() })
		if held {
			return wrong("round %d: evicted connection %d is still in the wheel", round, want.ID())
		}
		order = append(order[1:], c)
	}
	until(origin.Add(time.Duration(2*evictDuringPassesRounds+4) * tick)) // every deadline passes
	for _, r := range reports {
		id := r.to.Conn.ID()
		at, gone := evictedAt[id]
		if !gone {
			continue
		}
		eviction := reports[at].to.At
		if r.to.Kind == inactivitycop.Evicted && r.to.At != eviction {
			return wrong("connection %d was evicted twice, at %v and %v", id, eviction.Sub(origin), r.to.At.Sub(origin))
		}
		if r.to.At.After(eviction) {
			return wrong("connection %d's %v timeout fired at %v, after its eviction at %v", id, r.to.Kind, r.to.At.Sub(origin), eviction.Sub(origin))
		}
	}
	if len(evictedAt) != evictDuringPassesRounds {
		return wrong("%d connections were reported evicted in %d rounds", len(evictedAt), evictDuringPassesRounds)
	}
	if got := h.Metrics().Evicted.Value(); got != int64(len(evictedAt)) {
		return wrong("inactivity_cop_evicted is %d, %d connections were evicted", got, len(evictedAt))
	}
	return smp, nil
}

// runHandler starts h's cop task; what it returns stops the task and
// waits for it.
func runHandler(s *sim.Sim, h *inactivitycop.Handler) (stop func()) {
	ctx := context.Background()
	runCtx, cancel := s.WithCancel(ctx)
	done := h.Start(runCtx)
	return func() { cancel(); _ = done.Wait(ctx) }
}

// wrongTW10 returns a TW-10 directed check's way to fail: the violation is
// counted in *smp and returned with it.
func wrongTW10(smp *claims.Sample) func(format string, a ...any) (claims.Sample, error) {
	return func(format string, a ...any) (claims.Sample, error) {
		err := fmt.Errorf("TW-10: "+format, a...)
		smp.Wrongly(func() string { return err.Error() })
		return *smp, err
	}
}

func idsOf(cs []*inactivitycop.Conn) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.ID()
	}
	return out
}

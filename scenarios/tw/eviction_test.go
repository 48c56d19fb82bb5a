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
)

// smallQueues gives every thread a queue of a half to nine tenths of the
// connections it opens at the start, so that openings evict throughout the
// run; or, for the smallest draws (about one thread in ten to thirty), a
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
// instants): every connection the reference evicts, the wheel cop's
// handler is told of exactly once, at the same opening, in the same order
// (least recently active first); it is closed and out of the wheel right
// after, and nothing of it fires later; inactivity_cop_evicted counts the
// evictions. All the other timeouts stay the reference's (TW-2's
// differential).
func TestTW10_EvictionInWorlds(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-10", Seeds: seeds(10), Config: twSim,
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
// production configuration with a queue of 8 to 32, makes activity on some
// of them, and keeps its own list of the documented order (least recently
// active first: an opening or a NetActivity moves a connection to the end;
// a setter does not). Every connection is armed with a timeout that comes
// due soon. Each further opening must evict exactly the first of the list:
// its handler is told once, from inside that Open, with an Evicted timeout;
// it is closed and out of the wheel; inactivity_cop_evicted counts it; and
// no callback comes for it afterwards, though its old deadline passes.
func TestTW10_EvictionOrderDirected(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-10", Seeds: seeds(10), Config: twSim,
		Fly:    func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return evictInOrder(s) },
		Sample: func(r claims.Sample) claims.Sample { return r },
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
	runCtx, cancel := s.WithCancel(ctx)
	done := h.Start(runCtx)
	defer func() { cancel(); _ = done.Wait(ctx) }()
	wrong := func(format string, a ...any) (claims.Sample, error) {
		err := fmt.Errorf("TW-10: "+format, a...)
		smp.Wrongly(func() string { return err.Error() })
		return smp, err
	}
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

func idsOf(cs []*inactivitycop.Conn) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.ID()
	}
	return out
}

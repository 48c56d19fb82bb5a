package simbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

var bg = context.Background()

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// msg is a test message: its publish number as the test counted it.
type msg struct{ id int }

// call is one handler call as the handler saw it.
type call struct {
	id int
	at time.Duration
}

// world is a bus with subscribers whose handlers log their calls.
type world struct {
	s     *sim.Sim
	bus   *simbus.Bus[msg]
	subs  []*simbus.Subscriber[msg]
	calls map[string][]call
	ids   int
}

func newWorld(s *sim.Sim, cfg simbus.Config) *world {
	bus, err := simbus.New[msg](s, cfg)
	if err != nil {
		s.Failf("simbus.New: %v", err)
	}
	return &world{s: s, bus: bus, calls: map[string][]call{}}
}

func (w *world) subscribe(name string, f simbus.Faults) *simbus.Subscriber[msg] {
	sub, err := w.bus.SubscribeWith(name, f, func(m msg) {
		w.calls[name] = append(w.calls[name], call{m.id, w.s.Elapsed()})
	})
	if err != nil {
		w.s.Failf("subscribe: %v", err)
	}
	w.subs = append(w.subs, sub)
	return sub
}

func (w *world) publish(from string) {
	w.ids++
	if err := w.bus.Publish(bg, from, msg{w.ids}); err != nil {
		w.s.Failf("publish: %v", err)
	}
}

// result is what a test keeps of a run: per subscriber, records, stats and
// the handler's calls.
type result struct {
	recs  map[string][]simbus.Record[msg]
	stats map[string]simbus.Stats
	outs  map[string][]simbus.Window
	calls map[string][]call
}

func (w *world) result() result {
	r := result{recs: map[string][]simbus.Record[msg]{}, stats: map[string]simbus.Stats{}, outs: map[string][]simbus.Window{}, calls: w.calls}
	for _, sub := range w.subs {
		r.recs[sub.Name()] = sub.Records()
		r.stats[sub.Name()] = sub.Stats()
		r.outs[sub.Name()] = sub.Outages()
	}
	return r
}

func run(t *testing.T, seed uint64, body func(s *sim.Sim)) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: seed}, body)
	require.NoError(t, res.Err, "seed %d", seed)
	return res
}

func elapsed(t time.Time) time.Duration { return t.Sub(sim.Epoch) }

package simbus_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// TestPartitionDropsExactlyTheMessagesSentInIt: with zero delay and a
// partition [1s, 2s), a message every 100ms from +0s to +3s is lost exactly
// when sent in [1s, 2s), with CausePartition; the unpartitioned subscriber
// gets all of them.
func TestPartitionDropsExactlyTheMessagesSentInIt(t *testing.T) {
	var r result
	run(t, 1, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{})
		w.subscribe("cut", simbus.Faults{Partitions: []simbus.Window{{Start: time.Second, End: 2 * time.Second}}})
		w.subscribe("ok", simbus.Reliable())
		for i := range 31 {
			if i > 0 {
				_ = s.Sleep(bg, ms(100))
			}
			w.publish("writer")
		}
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	var lost []time.Duration
	for _, rec := range r.recs["cut"] {
		sent := elapsed(rec.SentAt)
		inWindow := sent >= time.Second && sent < 2*time.Second
		if inWindow {
			require.Equal(t, simbus.Lost, rec.Fate(), "sent at +%v", sent)
			require.Equal(t, simbus.CausePartition, rec.Cause)
			lost = append(lost, sent)
		} else {
			require.Equal(t, simbus.Delivered, rec.Fate(), "sent at +%v", sent)
		}
	}
	assert.Len(t, lost, 10)
	assert.Equal(t, int64(10), r.stats["cut"].Lost(simbus.CausePartition))
	assert.Equal(t, int64(21), r.stats["cut"].Delivered)
	assert.Equal(t, int64(31), r.stats["ok"].Delivered)
	assert.Equal(t, []simbus.Window{{Start: time.Second, End: 2 * time.Second}}, r.outs["cut"])
}

// TestPartitionKillsMessagesInFlight: a message sent before a partition
// but due to arrive inside it dies with the connection; one that arrives
// before the window starts is delivered.
func TestPartitionKillsMessagesInFlight(t *testing.T) {
	var r result
	run(t, 1, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{})
		w.subscribe("cut", simbus.Faults{
			Delay:      simbus.Delay{Min: ms(300), Max: ms(300)},
			Partitions: []simbus.Window{{Start: time.Second, End: 2 * time.Second}},
		})
		_ = s.Sleep(bg, ms(600))
		w.publish("writer") // arrives at +0.9s: delivered
		_ = s.Sleep(bg, ms(200))
		w.publish("writer") // sent at +0.8s, arrives at +1.1s: lost
		_ = s.Sleep(bg, ms(1200))
		w.publish("writer") // sent at +2.0s: delivered at +2.3s
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	recs := r.recs["cut"]
	require.Len(t, recs, 3)
	assert.Equal(t, []time.Time{sim.Epoch.Add(ms(900))}, recs[0].Calls)
	assert.Equal(t, simbus.CausePartition, recs[1].Cause)
	assert.Equal(t, []time.Time{sim.Epoch.Add(ms(2300))}, recs[2].Calls)
}

// TestReconnectGapsLoseWhatWasSentMeanwhile: with random reconnect gaps and
// zero delay, a message is lost exactly when its publish instant falls in
// a drawn gap, with CauseReconnect; the gaps are counted and traced.
func TestReconnectGapsLoseWhatWasSentMeanwhile(t *testing.T) {
	f := simbus.Faults{Reconnect: simbus.Reconnect{MeanEvery: time.Second, MinGap: ms(100), MaxGap: ms(400)}}
	lostTotal := 0
	for seed := uint64(1); seed <= 20; seed++ {
		var r result
		var trace bytes.Buffer
		res := sim.Run(sim.Config{Seed: seed, TraceOut: &trace}, func(s *sim.Sim) {
			w := newWorld(s, simbus.Config{})
			w.subscribe("flaky", f)
			for range 300 {
				_ = s.Sleep(bg, time.Duration(s.Rand().IntN(40))*time.Millisecond)
				w.publish("writer")
			}
			_ = s.Sleep(bg, time.Second)
			r = w.result()
		})
		require.NoError(t, res.Err)
		gaps := r.outs["flaky"]
		require.NotEmpty(t, gaps)
		for _, rec := range r.recs["flaky"] {
			sent := elapsed(rec.SentAt)
			if inOutage(gaps, sent, sent) {
				require.Equal(t, simbus.CauseReconnect, rec.Cause, "seed %d: sent at +%v inside a gap", seed, sent)
				lostTotal++
			} else {
				require.Equal(t, simbus.Delivered, rec.Fate(), "seed %d: sent at +%v outside every gap", seed, sent)
			}
		}
		st := r.stats["flaky"]
		assert.Equal(t, int64(len(gaps)), st.ReconnectGaps)
		assert.Equal(t, len(gaps), strings.Count(trace.String(), "(reconnect gap)"))
		assert.Equal(t, int(st.Lost(simbus.CauseReconnect)), strings.Count(trace.String(), ": reconnect"))
	}
	assert.Positive(t, lostTotal)
}

// TestQueueOverflowDropsAndCounts: a burst larger than the queue never
// blocks the publisher; the excess is lost with CauseOverflow, counted and
// traced, and the queue never holds more than its bound.
func TestQueueOverflowDropsAndCounts(t *testing.T) {
	var r result
	var publishTook time.Duration
	run(t, 1, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{QueueLen: 3})
		w.subscribe("small", simbus.Faults{Delay: simbus.Delay{Min: time.Second, Max: time.Second}})
		start := s.Elapsed()
		for range 10 {
			w.publish("burst")
		}
		publishTook = s.Elapsed() - start
		_ = s.Sleep(bg, 2*time.Second)
		for range 2 {
			w.publish("later")
		}
		_ = s.Sleep(bg, 2*time.Second)
		r = w.result()
	})
	assert.Zero(t, publishTook, "Publish never waits")
	st := r.stats["small"]
	assert.Equal(t, int64(7), st.Lost(simbus.CauseOverflow))
	assert.Equal(t, int64(5), st.Delivered)
	assert.Equal(t, int64(3), st.QueueMax)
	assert.Zero(t, st.QueueLen)
	var ids []int
	for _, c := range r.calls["small"] {
		ids = append(ids, c.id)
	}
	assert.Equal(t, []int{1, 2, 3, 11, 12}, ids)
}

// TestCloseLosesPendingAndEndsTheTask: closing a subscriber loses what is
// in flight with CauseClosed and ends its delivery task; later publishes
// skip it; closing the bus refuses publishes and subscriptions.
func TestCloseLosesPendingAndEndsTheTask(t *testing.T) {
	var r result
	var pubErr, subErr error
	var trace bytes.Buffer
	res := sim.Run(sim.Config{Seed: 1, TraceOut: &trace}, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{})
		sub := w.subscribe("leaving", simbus.Faults{Delay: simbus.Delay{Min: time.Second, Max: time.Second}})
		w.subscribe("staying", simbus.Reliable())
		w.publish("writer")
		_ = s.Sleep(bg, ms(1500))
		w.publish("writer") // in flight when the subscriber leaves
		sub.Close()
		sub.Close()
		w.publish("writer") // not offered to the closed subscriber
		_ = s.Sleep(bg, 2*time.Second)
		w.bus.Close()
		pubErr = w.bus.Publish(bg, "writer", msg{99})
		_, subErr = w.bus.Subscribe("late", func(msg) {})
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	require.NoError(t, res.Err)
	recs := r.recs["leaving"]
	require.Len(t, recs, 2)
	assert.Equal(t, simbus.Delivered, recs[0].Fate())
	assert.Equal(t, simbus.CauseClosed, recs[1].Cause)
	assert.Equal(t, int64(1), r.stats["leaving"].Lost(simbus.CauseClosed))
	assert.Equal(t, int64(3), r.stats["staying"].Delivered)
	assert.ErrorIs(t, pubErr, simbus.ErrClosed)
	assert.ErrorIs(t, subErr, simbus.ErrClosed)
	for _, name := range []string{"simbus leaving", "simbus staying"} {
		assert.Regexp(t, `done +\d+ `+name+`\n`, trace.String(), "%s's task ended", name)
	}
}

// TestSameSeedSameTrace: a swarm-configured bus under load gives the same
// trace hash for the same seed and different hashes for different seeds.
func TestSameSeedSameTrace(t *testing.T) {
	body := func(s *sim.Sim) {
		f := simbus.Swarm(s.Rand(), 5*time.Second)
		s.Note("bus %v", f)
		w := newWorld(s, simbus.Config{Faults: f, QueueLen: 16})
		for i := range 3 {
			w.subscribe(fmt.Sprint("relay", i), f)
		}
		for p := range 2 {
			s.Go(fmt.Sprint("pub", p), func() {
				for range 100 {
					_ = s.Sleep(bg, time.Duration(s.Rand().IntN(50))*time.Millisecond)
					w.publish(fmt.Sprint("pub", p))
				}
			})
		}
		_ = s.Sleep(bg, 10*time.Second)
	}
	seen := map[uint64]uint64{}
	for seed := uint64(1); seed <= 30; seed++ {
		a, b := run(t, seed, body), run(t, seed, body)
		require.Equal(t, a.Hash, b.Hash, "seed %d", seed)
		require.Equal(t, a.Header, b.Header)
		other, dup := seen[a.Hash]
		require.False(t, dup, "seeds %d and %d ran the same trace", other, seed)
		seen[a.Hash] = seed
	}
}

// TestBadConfigIsAnError: invalid faults and limits, bad names and nil
// handlers give clear errors.
func TestBadConfigIsAnError(t *testing.T) {
	cases := []struct {
		f    simbus.Faults
		want string
	}{
		{simbus.Faults{LossProb: 1.1}, "LossProb"},
		{simbus.Faults{DupProb: -1}, "DupProb"},
		{simbus.Faults{ReorderProb: 0.5}, "hold"},
		{simbus.Faults{ReorderMin: ms(2), ReorderMax: ms(1)}, "ReorderMin"},
		{simbus.Faults{Delay: simbus.Delay{Min: -1}}, "negative"},
		{simbus.Faults{Delay: simbus.Delay{Min: 2, Max: 1}}, "above Max"},
		{simbus.Faults{Delay: simbus.Delay{TailProb: 0.5}}, "tail"},
		{simbus.Faults{Delay: simbus.Delay{Max: 2 * time.Hour}}, "losses"},
		{simbus.Faults{Partitions: []simbus.Window{{Start: 2, End: 1}}}, "Start < End"},
		{simbus.Faults{Partitions: []simbus.Window{{Start: -1, End: 1}}}, "Start < End"},
		{simbus.Faults{Partitions: []simbus.Window{{Start: 5, End: 10}, {Start: 0, End: 6}}}, "overlap"},
		{simbus.Faults{Reconnect: simbus.Reconnect{MeanEvery: time.Microsecond, MinGap: 1, MaxGap: 1}}, "MeanEvery"},
		{simbus.Faults{Reconnect: simbus.Reconnect{MeanEvery: time.Second}}, "MinGap"},
	}
	for _, tc := range cases {
		err := tc.f.Validate()
		require.Error(t, err, "%+v", tc.f)
		assert.Contains(t, err.Error(), tc.want)
	}
	require.NoError(t, simbus.Reliable().Validate())
	assert.ErrorContains(t, simbus.Config{QueueLen: -1}.Validate(), "QueueLen")
	assert.ErrorContains(t, simbus.Config{MaxMessages: -1}.Validate(), "MaxMessages")

	var errs []error
	run(t, 1, func(s *sim.Sim) {
		_, err := simbus.New[msg](s, simbus.Config{Faults: simbus.Faults{LossProb: 2}})
		errs = append(errs, err)
		bus, _ := simbus.New[msg](s, simbus.Config{})
		_, err = bus.Subscribe("x", nil)
		errs = append(errs, err)
		_, err = bus.Subscribe("", func(msg) {})
		errs = append(errs, err)
		_, _ = bus.Subscribe("x", func(msg) {})
		_, err = bus.Subscribe("x", func(msg) {})
		errs = append(errs, err)
		_, err = bus.SubscribeWith("y", simbus.Faults{DupProb: 3}, func(msg) {})
		errs = append(errs, err)
		ctx, cancel := s.WithCancel(bg)
		cancel()
		errs = append(errs, bus.Publish(ctx, "w", msg{}))
	})
	want := []string{"LossProb", "nil handler", "empty", "exists", `subscriber "y": simbus: DupProb`, "context canceled"}
	require.Len(t, errs, len(want))
	for i, w := range want {
		assert.ErrorContains(t, errs[i], w)
	}
	_, err := simbus.New[msg](nil, simbus.Config{})
	assert.ErrorContains(t, err, "sim.Sim")

	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		bus, _ := simbus.New[msg](s, simbus.Config{MaxMessages: 2})
		for range 3 {
			_ = bus.Publish(bg, "w", msg{})
		}
	})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "message limit of 2")
}

// TestSwarmSwitchesKindsPerSeed: each kind is on for about half the seeds,
// every plan validates, the same source gives the same plan, partitions lie
// inside the horizon, and String names what is on.
func TestSwarmSwitchesKindsPerSeed(t *testing.T) {
	const n = 2000
	horizon := 10 * time.Second
	on := map[string]int{}
	for seed := range uint64(n) {
		f := simbus.Swarm(rand.New(rand.NewPCG(seed, 0)), horizon)
		require.NoError(t, f.Validate(), "%v", f)
		require.Equal(t, f.String(), simbus.Swarm(rand.New(rand.NewPCG(seed, 0)), horizon).String())
		kinds := map[string]bool{
			"loss": f.LossProb > 0, "delay": f.Delay != (simbus.Delay{}), "dup": f.DupProb > 0,
			"reorder": f.ReorderProb > 0, "partitions": len(f.Partitions) > 0, "reconnect": f.Reconnect != (simbus.Reconnect{}),
		}
		for k, v := range kinds { //windtunnel:unordered counting
			if v {
				on[k]++
			}
		}
		for _, w := range f.Partitions {
			require.True(t, w.Start >= 0 && w.End <= horizon, "%v outside the horizon", w)
		}
		if !kinds["loss"] {
			require.Contains(t, f.String(), "loss=off")
		}
		if !kinds["reconnect"] {
			require.Contains(t, f.String(), "reconnect=off")
		}
	}
	require.Len(t, on, 6)
	for k, c := range on { //windtunnel:unordered independent checks
		assert.InDelta(t, n/2, c, 4*22.4, "%s on for %d of %d seeds", k, c, n)
	}
	assert.Empty(t, simbus.Swarm(rand.New(rand.NewPCG(1, 1)), 0).Partitions)
	assert.Equal(t, "loss=off delay=0s dup=off reorder=off partitions=none reconnect=off", simbus.Reliable().String())
}

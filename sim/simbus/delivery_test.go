package simbus_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// TestReliableDeliversEverythingOnceInOrder: with Reliable() links, three
// publishers racing each other reach every subscriber with every message,
// exactly once, at its publish instant, in publish order; the counters say
// the same.
func TestReliableDeliversEverythingOnceInOrder(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		var r result
		var published int
		run(t, seed, func(s *sim.Sim) {
			w := newWorld(s, simbus.Config{})
			for i := range 3 {
				w.subscribe(fmt.Sprint("relay", i), simbus.Reliable())
			}
			wg := s.NewWaitGroup("publishers")
			for p := range 3 {
				wg.Add(1)
				s.Go(fmt.Sprint("pub", p), func() {
					defer wg.Done()
					for range 30 {
						_ = s.Sleep(bg, time.Duration(s.Rand().IntN(3))*time.Millisecond)
						w.publish(fmt.Sprint("pub", p))
					}
				})
			}
			_ = wg.Wait(bg)
			_ = s.Sleep(bg, time.Second)
			r = w.result()
			published = w.bus.Published()
		})
		require.Equal(t, 90, published)
		for name, recs := range r.recs { //windtunnel:unordered independent checks
			require.Len(t, recs, 90)
			calls := r.calls[name]
			require.Len(t, calls, 90, "%s: every message once", name)
			for i, rec := range recs {
				require.Equal(t, uint64(i+1), rec.Seq)
				require.Equal(t, simbus.Delivered, rec.Fate())
				require.Equal(t, []time.Time{rec.SentAt}, rec.Calls, "delivered at once, once")
				require.Equal(t, rec.Msg.id, calls[i].id, "%s: publish order", name)
				require.False(t, rec.Reordered)
			}
			st := r.stats[name]
			assert.Equal(t, simbus.Stats{Sent: 90, Delivered: 90, Calls: 90, QueueMax: st.QueueMax}, st)
			assert.Positive(t, st.QueueMax)
		}
	}
}

// TestDelayedLinkKeepsFIFO: random delays with a tail, but no reordering,
// keep every subscriber's deliveries in publish order and each delivery
// at or after its drawn arrival; a slow handler only delays later calls.
func TestDelayedLinkKeepsFIFO(t *testing.T) {
	f := simbus.Faults{Delay: simbus.Delay{Min: ms(1), Max: ms(50), TailProb: 0.2, TailMin: ms(200), TailMax: time.Second}}
	for seed := uint64(1); seed <= 20; seed++ {
		var r result
		run(t, seed, func(s *sim.Sim) {
			w := newWorld(s, simbus.Config{})
			w.subscribe("fast", f)
			_, err := w.bus.SubscribeWith("slow", f, func(m msg) {
				w.calls["slow"] = append(w.calls["slow"], call{m.id, s.Elapsed()})
				_ = s.Sleep(bg, ms(30)) // the handler takes time
			})
			if err != nil {
				s.Failf("%v", err)
			}
			for range 50 {
				_ = s.Sleep(bg, time.Duration(s.Rand().IntN(20))*time.Millisecond)
				w.publish("writer")
			}
			_ = s.Sleep(bg, 10*time.Second)
			r = w.result()
		})
		for _, name := range []string{"fast", "slow"} {
			calls := r.calls[name]
			require.Len(t, calls, 50)
			for i, c := range calls {
				require.Equal(t, i+1, c.id, "seed %d %s: FIFO", seed, name)
			}
		}
		// The fast subscriber's deliveries carry at least the minimum delay.
		for _, rec := range r.recs["fast"] {
			require.GreaterOrEqual(t, rec.Calls[0].Sub(rec.SentAt), ms(1))
		}
		slow := r.calls["slow"]
		for i := 1; i < len(slow); i++ {
			require.GreaterOrEqual(t, slow[i].at-slow[i-1].at, ms(30), "one handler call at a time")
		}
	}
}

// TestEveryMessageIsDeliveredOrLostWithItsCause: under heavy faults of
// every kind, for every subscriber and message, the record says delivered
// (1 or 2 handler calls, exactly as the handler saw) or lost with a cause
// consistent with the link's outages. Sent = Delivered + Lost + Pending,
// and the duplicate and reorder counters equal what the handler saw. Each
// fault kind shows up over the seeds.
func TestEveryMessageIsDeliveredOrLostWithItsCause(t *testing.T) {
	heavy := simbus.Faults{
		LossProb:    0.1,
		Delay:       simbus.Delay{Min: 0, Max: ms(20), TailProb: 0.05, TailMin: ms(100), TailMax: ms(800)},
		DupProb:     0.1,
		ReorderProb: 0.1, ReorderMin: ms(10), ReorderMax: ms(500),
		Partitions: []simbus.Window{{Start: 2 * time.Second, End: 2500 * time.Millisecond}},
		Reconnect:  simbus.Reconnect{MeanEvery: 2 * time.Second, MinGap: ms(50), MaxGap: ms(300)},
	}
	var totals simbus.Stats
	lostBy := map[simbus.Cause]int64{}
	for seed := uint64(1); seed <= 40; seed++ {
		var r result
		run(t, seed, func(s *sim.Sim) {
			w := newWorld(s, simbus.Config{QueueLen: 8})
			w.subscribe("a", heavy)
			w.subscribe("b", heavy)
			for range 200 {
				_ = s.Sleep(bg, time.Duration(s.Rand().IntN(50))*time.Millisecond)
				w.publish("writer")
			}
			_ = s.Sleep(bg, time.Duration(s.Rand().IntN(2))*time.Second) // some stay pending
			r = w.result()
		})
		for name, recs := range r.recs { //windtunnel:unordered independent checks
			st := r.stats[name]
			calls := r.calls[name]
			callsOf := map[int]int{}
			for _, c := range calls {
				callsOf[c.id]++
			}
			var delivered, pending, dups, reordered int64
			lost := map[simbus.Cause]int64{}
			for _, rec := range recs {
				n := len(rec.Calls)
				require.Equal(t, callsOf[rec.Msg.id], n, "seed %d %s #%d: record and handler disagree", seed, name, rec.Seq)
				switch rec.Fate() {
				case simbus.Delivered:
					delivered++
					require.LessOrEqual(t, n, 2)
					require.Equal(t, simbus.CauseNone, rec.Cause)
					dups += int64(n - 1)
					for _, c := range rec.Calls {
						require.False(t, c.Before(rec.SentAt))
						require.False(t, inOutage(r.outs[name], elapsed(rec.SentAt), elapsed(rec.Calls[0])), "delivered across an outage")
					}
				case simbus.Lost:
					lost[rec.Cause]++
					if rec.Cause == simbus.CausePartition || rec.Cause == simbus.CauseReconnect {
						require.True(t, inOutage(r.outs[name], elapsed(rec.SentAt), 1<<62), "lost to a disconnection that never came")
					}
				case simbus.Pending:
					pending++
				}
				if rec.Reordered {
					reordered++
				}
			}
			// Reordering as the handler saw it: a first call for a message
			// published before one already delivered.
			seen, maxID := map[int]bool{}, 0
			var overtaken int64
			for _, c := range calls {
				if seen[c.id] {
					continue
				}
				seen[c.id] = true
				if c.id < maxID {
					overtaken++
				}
				maxID = max(maxID, c.id)
			}
			require.Equal(t, int64(len(recs)), st.Sent)
			require.Equal(t, delivered, st.Delivered)
			require.Equal(t, pending, st.Pending)
			require.Equal(t, st.Sent, st.Delivered+st.LostTotal()+st.Pending)
			require.Equal(t, int64(len(calls)), st.Calls)
			require.Equal(t, st.Delivered+st.Duplicated, st.Calls)
			require.Equal(t, dups, st.Duplicated)
			require.Equal(t, reordered, st.Reordered)
			require.Equal(t, overtaken, st.Reordered, "reorder counter vs handler order")
			for _, c := range simbus.Causes() {
				require.Equal(t, lost[c], st.Lost(c), "cause %v", c)
				lostBy[c] += lost[c]
			}
			totals.Sent += st.Sent
			totals.Duplicated += st.Duplicated
			totals.Reordered += st.Reordered
			totals.Pending += st.Pending
		}
	}
	t.Logf("sent %d, duplicated %d, reordered %d, pending %d, lost %v", totals.Sent, totals.Duplicated, totals.Reordered, totals.Pending, lostBy)
	assert.Positive(t, totals.Duplicated)
	assert.Positive(t, totals.Reordered)
	assert.Positive(t, totals.Pending)
	for _, c := range []simbus.Cause{simbus.CauseLoss, simbus.CausePartition, simbus.CauseReconnect, simbus.CauseOverflow} {
		assert.Positive(t, lostBy[c], "cause %v never happened", c)
	}
}

// inOutage reports whether [from, to] meets one of the windows.
func inOutage(ws []simbus.Window, from, to time.Duration) bool {
	return slices.ContainsFunc(ws, func(w simbus.Window) bool { return w.Start <= to && from < w.End })
}

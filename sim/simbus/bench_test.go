package simbus_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// benchBus publishes b.N messages from one task to subs subscribers with
// faults f, spacing publishes 1ms apart so deliveries interleave with them,
// and reports messages (publishes) and deliveries per wall-clock second.
func benchBus(b *testing.B, subs int, f simbus.Faults) {
	b.ReportAllocs()
	n := b.N
	var calls int64
	b.ResetTimer()
	res := sim.Run(sim.Config{Seed: 1, MaxSteps: int64(n)*int64(subs)*10 + 1000, MaxVirtual: time.Duration(n)*time.Millisecond + time.Hour}, func(s *sim.Sim) {
		bus, err := simbus.New[int](s, simbus.Config{MaxMessages: n + 1})
		if err != nil {
			s.Failf("%v", err)
		}
		for i := range subs {
			if _, err := bus.SubscribeWith(fmt.Sprint("relay", i), f, func(int) { calls++ }); err != nil {
				s.Failf("%v", err)
			}
		}
		for i := range n {
			_ = bus.Publish(bg, "writer", i)
			_ = s.Sleep(bg, time.Millisecond)
		}
		_ = s.Sleep(bg, time.Minute)
	})
	b.StopTimer()
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkBaselineSleep is the floor: the publisher's 1ms sleep alone,
// with no bus.
func BenchmarkBaselineSleep(b *testing.B) {
	b.ReportAllocs()
	n := b.N
	b.ResetTimer()
	res := sim.Run(sim.Config{Seed: 1, MaxSteps: int64(n)*2 + 1000, MaxVirtual: time.Duration(n)*time.Millisecond + time.Hour}, func(s *sim.Sim) {
		for range n {
			_ = s.Sleep(bg, time.Millisecond)
		}
	})
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkReliable: four subscribers on perfect links.
func BenchmarkReliable(b *testing.B) { benchBus(b, 4, simbus.Reliable()) }

// BenchmarkFaulty: four subscribers with every fault kind on.
func BenchmarkFaulty(b *testing.B) {
	benchBus(b, 4, simbus.Faults{
		LossProb:    0.05,
		Delay:       simbus.Delay{Max: 5 * time.Millisecond, TailProb: 0.02, TailMin: 100 * time.Millisecond, TailMax: time.Second},
		DupProb:     0.05,
		ReorderProb: 0.05, ReorderMin: 10 * time.Millisecond, ReorderMax: 500 * time.Millisecond,
		Reconnect: simbus.Reconnect{MeanEvery: 5 * time.Second, MinGap: 10 * time.Millisecond, MaxGap: time.Second},
	})
}

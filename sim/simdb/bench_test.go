package simdb_test

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// benchRun runs op b.N times inside one simulation, spread over tasks
// clients, and reports operations per wall-clock second.
func benchRun(b *testing.B, clients int, setup func(s *sim.Sim) func()) {
	b.ReportAllocs()
	n := b.N
	b.ResetTimer()
	res := sim.Run(sim.Config{Seed: 1, MaxSteps: int64(n)*20 + 1000}, func(s *sim.Sim) {
		op := setup(s)
		wg := s.NewWaitGroup("clients")
		for i := range clients {
			wg.Add(1)
			s.Go(fmt.Sprint("client", i), func() {
				defer wg.Done()
				for j := i; j < n; j += clients {
					op()
				}
			})
		}
		_ = wg.Wait(bg)
	})
	b.StopTimer()
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkBaselineSleep is the floor a statement is measured against: one
// virtual sleep of a drawn latency per operation, nothing else.
func BenchmarkBaselineSleep(b *testing.B) {
	benchRun(b, 8, func(s *sim.Sim) func() {
		return func() {
			d, _ := simdb.DefaultLatency.Draw(s.Rand())
			_ = s.Sleep(bg, d)
		}
	})
}

// BenchmarkStatement: acquire, one statement with the default latency,
// release, from 8 clients on a pool of 4 (so checkouts queue).
func BenchmarkStatement(b *testing.B) {
	benchRun(b, 8, func(s *sim.Sim) func() {
		db := newDB(s, simdb.Config{PoolSize: 4, Latency: simdb.DefaultLatency, Statements: []string{"read"}})
		return func() {
			c, err := db.Acquire(bg)
			if err != nil {
				s.Failf("%v", err)
			}
			_, _ = read(bg, s, c)
			c.Release()
		}
	})
}

// BenchmarkWrite: one write with the default latency per operation.
func BenchmarkWrite(b *testing.B) {
	benchRun(b, 8, func(s *sim.Sim) func() {
		db, _ := simdb.New(s, simdb.Config{Latency: simdb.DefaultLatency, MaxCommits: 1 << 30}, counter{})
		return func() { _, _ = db.Write(bg, "inc", inc) }
	})
}

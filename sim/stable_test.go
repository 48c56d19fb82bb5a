package sim

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Schedules are part of the contract: the same seed under the same
// strategy gives the same trace, not only within one binary but across
// changes to the scheduler's internals, so that a seed recorded in a corpus
// or an issue keeps reproducing. TestTraceHashesAreStable pins the trace
// hashes of a few programs that exercise every waiting path. The values
// were recorded before the scheduler's O(1) rework (runnable list, PCT heap,
// mutex queues, timer heap, decisions made on the task's coroutine) and it
// did not change one of them. A change that alters schedules on purpose
// must say so, and why, and update the table.
func TestTraceHashesAreStable(t *testing.T) {
	want := []struct {
		name  string
		hash  uint64
		steps int64
	}{
		{"busy/random/0x0", 0x6f4a146e755e78e2, 140},
		{"waits/random/0x0", 0xf86c052c4e3887b9, 169},
		{"waits/random/steptime/0x0", 0x29d27e9cad9ed2c7, 159},
		{"busy/pct2/0x0", 0x7426804eb9a4eb45, 130},
		{"waits/pct2/0x0", 0x2d2f6d23e27636e6, 153},
		{"waits/pct2/steptime/0x0", 0xaa15bfc86d58e72d, 159},
		{"busy/pct3/0x0", 0x32e0badaadea4e37, 130},
		{"waits/pct3/0x0", 0x6ed9933975066de2, 162},
		{"waits/pct3/steptime/0x0", 0xc09446eb89ce92a6, 155},
		{"busy/random/0x1", 0xc5b98b11a530a89c, 136},
		{"waits/random/0x1", 0x3fefcc830b0e58bd, 224},
		{"waits/random/steptime/0x1", 0x54dc7d1e1d8caa45, 210},
		{"busy/pct2/0x1", 0x7f1ea6bb42f3a8d1, 130},
		{"waits/pct2/0x1", 0x800e7ec10c7809a, 224},
		{"waits/pct2/steptime/0x1", 0x789f57b5bbc599ee, 205},
		{"busy/pct3/0x1", 0x2a71586cadde1809, 130},
		{"waits/pct3/0x1", 0xe11aa971f573191b, 222},
		{"waits/pct3/steptime/0x1", 0x1ec626ec55363f2, 207},
		{"busy/random/0x2", 0xc2b95402dcb33058, 139},
		{"waits/random/0x2", 0x3aaba8fb1ea8789f, 166},
		{"waits/random/steptime/0x2", 0x46a72f38c72b06ec, 149},
		{"busy/pct2/0x2", 0x89eeeeb1f9df952b, 130},
		{"waits/pct2/0x2", 0xee939d126185f0d5, 161},
		{"waits/pct2/steptime/0x2", 0x6b871c632b37f524, 157},
		{"busy/pct3/0x2", 0x241f69e86c19d31f, 130},
		{"waits/pct3/0x2", 0xd8ee471a0e9f3316, 152},
		{"waits/pct3/steptime/0x2", 0x349cffea4598adc9, 150},
		{"busy/random/0x5eed", 0x239042729a65f107, 140},
		{"waits/random/0x5eed", 0xfbe181dcd997d0ca, 95},
		{"waits/random/steptime/0x5eed", 0x9496841d9b33c368, 90},
		{"busy/pct2/0x5eed", 0x4245de7a9b1f1e41, 130},
		{"waits/pct2/0x5eed", 0x23c4324c9406c811, 93},
		{"waits/pct2/steptime/0x5eed", 0xdc1dcccdfe6e29c6, 91},
		{"busy/pct3/0x5eed", 0xfec21f439a01367, 130},
		{"waits/pct3/0x5eed", 0x63f8b1e90001b011, 91},
		{"waits/pct3/steptime/0x5eed", 0x787c93f05204fee6, 93},
	}
	cases := stableCases()
	if len(cases) != len(want) {
		t.Fatalf("%d cases, %d recorded hashes", len(cases), len(want))
	}
	for i, c := range cases {
		r := Run(c.cfg, c.prog)
		if r.Hash != want[i].hash || r.Steps != want[i].steps || c.name != want[i].name {
			t.Errorf("%s: hash %#x after %d steps, recorded %#x after %d steps: the schedule changed", c.name, r.Hash, r.Steps, want[i].hash, want[i].steps)
		}
	}
}

type stableCase struct {
	name string
	cfg  Config
	prog func(*Sim)
}

func stableCases() []stableCase {
	var cs []stableCase
	for _, seed := range []uint64{0, 1, 2, 0x5eed} {
		for _, st := range []struct {
			name string
			make func() Strategy
		}{
			{"random", RandomWalk},
			{"pct2", func() Strategy { return PCT(2, 100) }},
			{"pct3", func() Strategy { return PCT(3, 300) }},
		} {
			cs = append(cs,
				stableCase{fmt.Sprintf("busy/%s/%#x", st.name, seed), Config{Seed: seed, Strategy: st.make()}, busyProgram},
				stableCase{fmt.Sprintf("waits/%s/%#x", st.name, seed), Config{Seed: seed, Strategy: st.make()}, everyWait},
				stableCase{fmt.Sprintf("waits/%s/steptime/%#x", st.name, seed), Config{Seed: seed, Strategy: st.make(), StepDuration: 300 * time.Nanosecond}, everyWait},
			)
		}
	}
	return cs
}

// everyWait runs tasks through every way to wait: contended and timed-out
// locks, TryLock, reader/writer locks with deadlines, events, sleeps on
// cancellable contexts, AfterFunc and Stop.
func everyWait(s *Sim) {
	mu := s.NewMutex("m")
	mu2 := s.NewMutex("m2")
	rw := s.NewRWMutex("rw")
	ev := s.NewEvent("ev")
	wg := s.NewWaitGroup("wg")
	root, cancelRoot := s.WithCancel(context.Background())
	shared := 0
	n := 3 + s.Rand().IntN(5)
	for i := range n {
		wg.Add(1)
		s.Go(fmt.Sprint("g", i), func() {
			defer wg.Done()
			for j := range 6 {
				switch (i + j) % 7 {
				case 0:
					mu.Lock()
					shared++
					mu.Unlock()
				case 1:
					ctx, cancel := s.WithTimeout(root, time.Duration(s.Rand().IntN(3))*time.Microsecond)
					if mu.LockContext(ctx) == nil {
						_ = s.Sleep(bg, time.Microsecond)
						mu.Unlock()
					}
					cancel()
				case 2:
					if mu.TryLock() {
						s.Yield()
						mu.Unlock()
					}
					mu2.Lock()
					s.Yield()
					mu2.Unlock()
				case 3:
					ctx, cancel := s.WithTimeout(root, time.Duration(s.Rand().IntN(4))*time.Microsecond)
					if rw.RLockContext(ctx) == nil {
						_ = s.Sleep(ctx, 2*time.Microsecond)
						rw.RUnlock()
					}
					if rw.LockContext(ctx) == nil {
						rw.Unlock()
					}
					cancel()
				case 4:
					rw.RLock()
					s.Yield()
					rw.RUnlock()
					if rw.TryRLock() {
						rw.RUnlock()
					}
				case 5:
					ctx, cancel := s.WithTimeout(root, time.Microsecond)
					_ = ev.Wait(ctx)
					cancel()
					t := s.AfterFunc(time.Duration(s.Rand().IntN(3))*time.Microsecond, func() { shared++ })
					if s.Rand().IntN(2) == 0 {
						t.Stop()
					}
				case 6:
					mu.Lock()
					mu2.Lock()
					rw.Lock()
					rw.Unlock()
					mu2.Unlock()
					mu.Unlock()
					_ = s.Sleep(bg, time.Duration(s.Rand().IntN(3))*time.Microsecond)
				}
			}
		})
	}
	s.AfterFunc(3*time.Microsecond, ev.Set)
	_ = wg.Wait(bg)
	cancelRoot()
	_ = s.Sleep(bg, 10*time.Microsecond)
}

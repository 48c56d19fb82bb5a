package sim

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangLimit is the tests' Config.HangAfter: low, so that a wedged run
// fails fast.
const hangLimit = 200 * time.Millisecond

// runHung runs a program whose task wedged blocks outside the simulator. It
// checks that the run fails as a hang within a few limits, naming the task,
// its wait reason, this file's frame and the rule. It then calls release
// so that the wedged goroutine can end.
func runHung(t *testing.T, reason string, wedged func(), release func()) {
	t.Helper()
	start := time.Now()
	res := Run(Config{Seed: 1, HangAfter: hangLimit}, func(s *Sim) {
		wg := s.NewWaitGroup("wedged")
		wg.Add(1)
		s.Go("wedged", func() { defer wg.Done(); wedged() })
		_ = wg.Wait(bg)
	})
	took := time.Since(start)
	release()
	assert.Less(t, took, 10*hangLimit, "the hang is detected within a few limits")
	assert.GreaterOrEqual(t, took, hangLimit, "and not before the limit")
	f := res.Failure()
	require.NotNil(t, f, "a wedged run fails: %v", res.Err)
	assert.Equal(t, FailHang, f.Kind)
	assert.Equal(t, "wedged", f.Task)
	msg := res.Err.Error()
	for _, want := range []string{`task "wedged" ran`, "[" + reason, "hang_test.go:", "rule: a simulated task waits only through the rt seam",
		"fix: use the Sim's rt primitives", "cannot be unwound"} {
		assert.Contains(t, msg, want)
	}
	assert.Contains(t, f.Stack, "hang_test.go:", "the stack is the wedged goroutine's")
	assert.NotContains(t, f.Stack, "runScheduler", "and not the scheduler's")
}

func TestHangOnChannelReceive(t *testing.T) {
	ch := make(chan int)
	runHung(t, "chan receive]", func() { <-ch }, func() { close(ch) })
}

func TestHangOnSyncMutex(t *testing.T) {
	var mu sync.Mutex
	mu.Lock()
	runHung(t, "sync.Mutex.Lock]", func() { mu.Lock(); mu.Unlock() }, mu.Unlock)
}

func TestHangOnSelect(t *testing.T) {
	a, b := make(chan int), make(chan int)
	runHung(t, "select]", func() {
		select {
		case <-a:
		case <-b:
		}
	}, func() { close(a) })
}

func TestHangOnBusyLoop(t *testing.T) {
	var stop atomic.Bool
	runHung(t, "running", func() {
		for !stop.Load() { //nolint:revive // the loop with no scheduling point under test
		}
	}, func() { stop.Store(true) })
}

// TestHangOnlyWhenStuck: a run that takes steps for longer than the limit,
// each step short, is no hang; and the watch changes nothing in the run.
func TestHangOnlyWhenStuck(t *testing.T) {
	program := func(s *Sim) {
		deadline := time.Now().Add(3 * hangLimit)                         //windtunnel:realtime the test needs wall time to pass
		for i := 0; i < 100_000_000 && time.Now().Before(deadline); i++ { //windtunnel:realtime as above
			s.Yield()
		}
	}
	res := Run(Config{Seed: 1, HangAfter: hangLimit, MaxSteps: 200_000_000}, program)
	require.NoError(t, res.Err)
	assert.Greater(t, res.Steps, int64(1000), "the run took steps")

	busy := func(hang time.Duration) Result { return Run(Config{Seed: 7, HangAfter: hang}, busyProgram) }
	watched, unwatched := busy(0), busy(-1)
	require.NoError(t, watched.Err)
	require.NoError(t, unwatched.Err)
	assert.Equal(t, unwatched.Hash, watched.Hash, "the watch changes no decision")
	assert.Equal(t, unwatched.Steps, watched.Steps)
}

// TestHangInDeferredCall: a task stopped at the end of the run whose
// deferred call blocks is caught too.
func TestHangInDeferredCall(t *testing.T) {
	ch := make(chan int)
	defer close(ch)
	start := time.Now()
	res := Run(Config{Seed: 1, HangAfter: hangLimit}, func(s *Sim) {
		s.Go("sleeper", func() {
			defer func() { <-ch }()
			_ = s.Sleep(bg, time.Hour)
		})
		s.Yield()
	})
	assert.Less(t, time.Since(start), 10*hangLimit)
	f := res.Failure()
	require.NotNil(t, f, "%v", res.Err)
	assert.Equal(t, FailHang, f.Kind)
	assert.Equal(t, "sleeper", f.Task)
}

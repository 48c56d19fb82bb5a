package simtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
)

// TestFixtureHang has a task that waits on a Go channel nobody sends on:
// outside the simulator, so without the hang watch it would wait until go
// test's own timeout.
func TestFixtureHang(t *testing.T) {
	fixture(t)
	never := make(chan struct{})
	Run(t, Options{Seeds: 5}, func(s *sim.Sim) error {
		s.Go("blocker", func() { <-never })
		s.Yield()
		s.Yield()
		return nil
	})
}

// A hang fails the seed with the usual failure block, naming the task and
// where it waits, well before go test's timeout, and is not run again for
// artifacts.
func TestHarnessReportsAHang(t *testing.T) {
	const limit = 300 * time.Millisecond
	dir := t.TempDir()
	start := time.Now()
	out, err := childRun(t, dir, "TestFixtureHang", "hang", nil, "-sim.hang="+limit.String(), "-sim.out="+dir+"/art", "-sim.record=false")
	took := time.Since(start)
	require.Error(t, err, "a hung simulation fails the test: %s", out)
	for _, want := range []string{
		"windtunnel failure", "failure    hang at step", `task "blocker" ran`, "[chan receive]", "hang_test.go:",
		"rule: a simulated task waits only through the rt seam", "artifacts  not written: a hung run is not run again", "reproduce:",
	} {
		assert.Contains(t, out, want)
	}
	assert.Less(t, took, 20*limit, "the run ends within a few limits, not at go test's timeout")

	// Without the watch, the same run would wait forever: -sim.hang=0 and a
	// short process timeout show it still waits after several limits.
	start = time.Now()
	out, err = childRun(t, dir, "TestFixtureHang", "hang", nil, "-sim.hang=0", "-sim.record=false", "-test.timeout=3s")
	require.Error(t, err)
	assert.Contains(t, out, "panic: test timed out after 3s", "-sim.hang=0 watches nothing")
	assert.NotContains(t, out, "windtunnel failure")
	assert.GreaterOrEqual(t, time.Since(start), 3*time.Second)
}

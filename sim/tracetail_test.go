package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheTailShowsTheOtherTasksPastMainsSteps: a run whose main task takes
// many steps at the end (a check polling, a drain) still shows the workers'
// last events in its tail, and the header says what the tail left out.
func TestTheTailShowsTheOtherTasksPastMainsSteps(t *testing.T) {
	res := Run(Config{Seed: 3, TraceTail: 24}, func(s *Sim) {
		wg := s.NewWaitGroup("workers")
		wg.Add(2)
		for _, name := range []string{"reader", "writer"} {
			s.Go(name, func() {
				defer wg.Done()
				for i := range 3 {
					s.Tracef("%s did %d", name, i)
					s.Yield()
				}
			})
		}
		_ = wg.Wait(bg)
		for range 150 {
			s.Yield()
		}
		s.Failf("the check failed")
	})
	require.Error(t, res.Err)
	tail := strings.Join(res.Tail, "\n")
	assert.Contains(t, tail, "note  [1 reader] reader did 2", "the reader's last event")
	assert.Contains(t, tail, "note  [2 writer] writer did 2", "the writer's last event")
	assert.LessOrEqual(t, len(res.Tail), 24)
	assert.Less(t, strings.Count(tail, "run   0 main"), 3, "main's run steps are left out but the last")
	assert.Contains(t, res.Tail[len(res.Tail)-1], " 0 main", "the run's last event, where it failed, stays")
	assert.Contains(t, tail, "run steps of main (steps ", "the stretch left out is one line")
	assert.Contains(t, res.TailAbout, "run steps of main among them left out")
	assert.Contains(t, res.TailAbout, "tasks main, reader, writer")
	assert.Contains(t, res.TailAbout, "of "+itoa(res.Events)+" events")
	t.Logf("trace tail (%s):\n%s", res.TailAbout, tail)
}

// TestATailOfMainAloneKeepsItsSteps: with no other task in sight, main's run
// steps are all there is to read.
func TestATailOfMainAloneKeepsItsSteps(t *testing.T) {
	res := Run(Config{Seed: 3, TraceTail: 8}, func(s *Sim) {
		for range 20 {
			s.Yield()
		}
		s.Failf("boom")
	})
	require.Error(t, res.Err)
	assert.Len(t, res.Tail, 8)
	assert.Equal(t, "last 8 of "+itoa(res.Events)+" events; tasks main", res.TailAbout)
	assert.Equal(t, res.TailAbout, res.tailAbout())
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

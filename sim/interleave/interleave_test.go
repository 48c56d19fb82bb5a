package interleave_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/interleave"
)

// racyCounter: two clients increment under a lock they drop between the
// read and the write; an idle task runs alongside and must be folded away.
func racyCounter(s *sim.Sim) {
	mu := s.NewMutex("counter")
	counter := 0
	var last sim.EventID
	wg := s.NewWaitGroup("all")
	wg.Add(3)
	s.Go("idle", func() {
		defer wg.Done()
		for range 3 {
			s.Yield()
		}
	})
	for c := range 2 {
		s.Go(fmt.Sprintf("client%d", c), func() {
			defer wg.Done()
			op := s.OpBegin("increment")
			mu.Lock()
			v := counter
			mu.Unlock()
			s.Yield()
			mu.Lock()
			counter = v + 1
			mu.Unlock()
			last = s.OpEnd(op, "ok (%d)", v+1)
		})
	}
	_ = wg.Wait(context.Background())
	if counter != 2 {
		s.Blame(last, "X-1: the second increment's write lost the first")
		s.Failf("lost update: counter %d", counter)
	}
}

func failingRecord(t *testing.T) sim.Result {
	t.Helper()
	for seed := uint64(1); seed < 200; seed++ {
		if res := sim.Run(sim.Config{Seed: seed, Record: true}, racyCounter); res.Err != nil {
			return res
		}
	}
	t.Fatal("no failing seed")
	return sim.Result{}
}

func TestTableShowsTheInterleaving(t *testing.T) {
	res := failingRecord(t)
	f := res.Failure()
	out := interleave.String(res.Record, interleave.Options{Failure: res.Err.Error(), FailureStep: f.Step})
	t.Log("\n" + out)
	assert.Contains(t, out, "scenario: 2 operations on 2 tasks")
	assert.Contains(t, out, "client0          increment -> ok")
	header := strings.Split(out, "\n")[strings.Count(out[:strings.Index(out, "row ")], "\n")]
	assert.Contains(t, header, "client0")
	assert.Contains(t, header, "client1")
	assert.NotContains(t, header, "idle", "a task that only ran is folded away")
	assert.Contains(t, out, "folded away (main, idle)")
	assert.Contains(t, out, "lock+unlock mutex counter", "a lock held with nothing between is one row")
	assert.Contains(t, out, "▶ preempts client", "preemptions are rows")
	assert.Contains(t, out, "✗", "the blamed row is marked")
	assert.Contains(t, out, "^ X-1: the second increment's write lost the first")
	assert.Contains(t, out, "✗ failed at step")
	assert.Contains(t, out, "lost update: counter 1")
}

func TestLongTablesAreFolded(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		for i := range 500 {
			s.Tracef("note %d", i)
		}
		s.Blame(s.OpEnd(s.OpBegin("read"), "stale"), "OC-2: blamed")
		for i := range 500 {
			s.Tracef("later %d", i)
		}
	})
	require.NoError(t, res.Err)
	out := interleave.String(res.Record, interleave.Options{MaxRows: 40})
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " | ") && !strings.Contains(l, "row ") {
			rows++
		}
	}
	assert.LessOrEqual(t, rows, 40)
	assert.Contains(t, out, "rows folded")
	assert.Contains(t, out, "OC-2: blamed", "a blamed row survives folding")
	assert.Contains(t, out, "later 499", "the end survives folding")
}

func TestNoRecordIsAnError(t *testing.T) {
	var b strings.Builder
	require.Error(t, interleave.Write(&b, nil, interleave.Options{}))
}

func TestTableIsDeterministic(t *testing.T) {
	a := interleave.String(failingRecord(t).Record, interleave.Options{})
	b := interleave.String(failingRecord(t).Record, interleave.Options{})
	assert.Equal(t, a, b)
}

package interleave_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/interleave"
	"github.com/windtunnel/windtunnel/sim/record"
)

// racyCounter: two clients increment under a lock they drop between the
// read and the write; an idle task runs alongside and must be folded away.
func racyCounter(s *sim.Sim) {
	mu := s.NewMutex("counter")
	counter := 0
	var last record.EventID
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

// crowd records tasks many tasks, three of them named race-prime, each
// beginning an operation with a long text and answering it at length; the
// last answer is blamed with a long finding.
func crowd(t *testing.T, tasks int) (*record.Record, []string) {
	t.Helper()
	var texts []string
	for i := range tasks {
		texts = append(texts,
			fmt.Sprintf("pod%d client %d: accessible k1 n%d o2 with the snapshot 00000000-0000-0000-0000-00000000000%d and its long answer list", i%3, i, i, i%10),
			fmt.Sprintf("%d channels: o1 o2 o3 o4 o5 o6 seen at snapshot 4242424242424242424242424242 (task %d)", 6+i, i))
	}
	blame := "OC-2: grant-staleness 1.802855365s breaks < 1s: read #7 non-member oc/k1/n1/o2 on pod 0, answered from a cache filled by a read that began before the delete committed"
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		wg := s.NewWaitGroup("all")
		wg.Add(tasks)
		var last record.EventID
		for i := range tasks {
			name := fmt.Sprintf("worker-with-a-long-name-%d", i)
			if i < 3 {
				name = "race-prime"
			}
			s.Go(name, func() {
				defer wg.Done()
				op := s.OpBegin("%s", texts[2*i])
				s.Yield()
				last = s.OpEnd(op, "%s", texts[2*i+1])
			})
		}
		_ = wg.Wait(context.Background())
		s.Blame(last, "%s", blame)
	})
	require.NoError(t, res.Err)
	return res.Record, append(texts, blame)
}

// squash drops what folding adds (spaces, line breaks) and the table's
// rules, so that a folded text reads as it was.
func squash(s string) string {
	return strings.NewReplacer(" ", "", "\n", "", "|", "").Replace(s)
}

func TestAWideTableFitsAndCutsNothing(t *testing.T) {
	for _, tasks := range []int{3, 7, 16} {
		t.Run(fmt.Sprintf("tasks=%d", tasks), func(t *testing.T) {
			rec, texts := crowd(t, tasks)
			out := interleave.String(rec, interleave.Options{Failure: "check: " + texts[len(texts)-1], FailureStep: 9})
			for i, l := range strings.Split(out, "\n") {
				assert.LessOrEqual(t, utf8.RuneCountInString(l), 120, "line %d is %d columns: %q", i+1, utf8.RuneCountInString(l), l)
			}
			table := out[strings.Index(out, "interleaving:"):]
			scenario := out[:strings.Index(out, "interleaving:")]
			for i, text := range texts {
				assert.Contains(t, squash(table), squash(text), "the table holds every text in full")
				if i < len(texts)-1 {
					assert.Contains(t, squash(scenario), squash(text), "and so does the scenario")
				}
			}
			assert.NotContains(t, out, "…\n", "no cell is cut")
			if tasks == 7 {
				t.Log("\n" + out)
			}
		})
	}
}

func TestSameNamedTasksGetDistinctColumns(t *testing.T) {
	rec, _ := crowd(t, 4)
	out := interleave.String(rec, interleave.Options{})
	lines := strings.Split(out, "\n")
	var header []string
	for i, l := range lines {
		if strings.HasPrefix(l, "  row ") {
			// The header may fold: its lines run until the rule.
			for _, h := range lines[i:] {
				if strings.HasPrefix(h, "---") {
					break
				}
				header = append(header, h)
			}
			break
		}
	}
	require.NotEmpty(t, header)
	var names []string
	for _, cell := range strings.Split(header[0], " | ")[1:] {
		names = append(names, strings.TrimSpace(cell))
	}
	assert.Equal(t, []string{"race-prime", "race-prime#2", "race-prime#3"}, names[:3], "header %q", header[0])
	assert.Contains(t, out, "  race-prime#2 ", "the scenario names them so too")
	assert.Contains(t, out, "  race-prime#3 ")
}

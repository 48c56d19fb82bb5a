package racefree

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// namedTB keeps the errors a check reports.
type namedTB struct {
	testing.TB
	errs []string
}

func (n *namedTB) Errorf(format string, args ...any) {
	n.errs = append(n.errs, fmt.Sprintf(format, args...))
}
func (n *namedTB) Helper() {}

// TestConcurrentlyReportsEachGoroutinesFailureByName: every goroutine
// runs to its end, and each failure reaches the test with the goroutine's
// name; goroutines that succeed report nothing.
func TestConcurrentlyReportsEachGoroutinesFailureByName(t *testing.T) {
	ran := make([]bool, 4)
	gs := Workers("worker", 3, func(i int) error {
		ran[i] = true
		if i == 1 {
			return errors.New("a wrong answer")
		}
		return nil
	})
	gs = append(gs, Goroutine{Name: "writer", Run: func() error { ran[3] = true; return errors.New("a failed write") }})
	assert.Equal(t, "worker-0", gs[0].Name)
	assert.Equal(t, "worker-2", gs[2].Name)
	tb := &namedTB{TB: t}
	Concurrently(tb, rt.Real(), gs...)
	assert.Equal(t, []bool{true, true, true, true}, ran)
	assert.Equal(t, []string{"worker-1: a wrong answer", "writer: a failed write"}, tb.errs)

	quiet := &namedTB{TB: t}
	Concurrently(quiet, rt.Real(), Workers("ok", 2, func(int) error { return nil })...)
	assert.Empty(t, quiet.errs)
}

// TestBackgroundGoroutinesSpanTheForegroundOnes: a background goroutine
// repeats its round until every foreground one has returned, and runs at
// least one round even when they are all done before it starts; its
// failure ends it and is reported.
func TestBackgroundGoroutinesSpanTheForegroundOnes(t *testing.T) {
	r := rt.Real()
	const steps = 50
	done := make([]int, 2) // each foreground goroutine's own count
	rounds := 0            // the background's: read after the run
	tb := &namedTB{TB: t}
	Concurrently(tb, r, append(Workers("fore", 2, func(i int) error {
		for range steps {
			done[i]++
			r.Yield()
		}
		return nil
	}), Goroutine{Name: "back", Background: true, Run: func() error {
		rounds++
		r.Yield()
		return nil
	}})...)
	assert.Empty(t, tb.errs)
	assert.Equal(t, []int{steps, steps}, done)
	assert.GreaterOrEqual(t, rounds, 1)

	// Alone, with nothing in the foreground: one round.
	alone := 0
	Concurrently(tb, r, Goroutine{Name: "only", Background: true, Run: func() error { alone++; return nil }})
	assert.Equal(t, 1, alone)

	// A failing round ends it, named.
	failing := &namedTB{TB: t}
	tries := 0
	Concurrently(failing, r, append(Workers("fore", 1, func(int) error {
		for range steps {
			r.Yield()
		}
		return nil
	}), Goroutine{Name: "back", Background: true, Run: func() error {
		tries++
		return errors.New("a wrong reading")
	}})...)
	assert.Equal(t, 1, tries)
	assert.Equal(t, []string{"back: a wrong reading"}, failing.errs)
}

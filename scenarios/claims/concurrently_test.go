package claims

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

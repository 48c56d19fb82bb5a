// Package racefree runs production code on real goroutines (rt.Real) for
// the RaceFree checks, where the race detector, not the simulator, is the
// judge: Concurrently runs named goroutines and reports each one's failure,
// and Preempting makes read-lock holds overlap even on one processor.
package racefree

// The goroutines run on rt.Real, never in a simulated task: a count of the
// foreground ones left, read by the background ones, is an atomic.
//
//windtunnel:allow sync/atomic Concurrently runs real goroutines (rt.Real), outside every simulated task

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Goroutine is one body a RaceFree check runs on a real goroutine: it
// returns its first failure and stops there, instead of calling t.Fatal
// off the test's goroutine.
type Goroutine struct {
	Name string
	Run  func() error
	// Background makes Run one round, repeated until every goroutine that
	// is not in the background has returned (at least once): a writer or
	// an inspector with a fixed count could finish before the others
	// started, on a loaded machine, and the race detector sees only the
	// accesses that overlap. CI once saw a check miss its race that way.
	Background bool
}

// Workers returns n goroutines named prefix-0 to prefix-(n-1), the i-th
// running body(i).
func Workers(prefix string, n int, body func(i int) error) []Goroutine {
	gs := make([]Goroutine, n)
	for i := range gs {
		gs[i] = Goroutine{Name: fmt.Sprint(prefix, "-", i), Run: func() error { return body(i) }}
	}
	return gs
}

// Concurrently runs each of gs on a goroutine of r (the RaceFree checks
// run the production code on rt.Real), waits for all of them, and fails t
// with each one's error, named. Each goroutine writes only its own slot,
// read after the wait, and the background ones read only the count of
// foreground ones left, which each foreground one lowers as it returns:
// nothing else synchronizes the goroutines, which could order the
// accesses the race detector is there to find.
func Concurrently(t testing.TB, r rt.Runtime, gs ...Goroutine) {
	t.Helper()
	var foreground atomic.Int64
	for _, g := range gs {
		if !g.Background {
			foreground.Add(1)
		}
	}
	errs := make([]error, len(gs))
	rounds := make([]int, len(gs))
	wg := r.NewWaitGroup("claims.concurrently")
	wg.Add(len(gs))
	for i, g := range gs {
		r.Go(g.Name, func() {
			defer wg.Done()
			if !g.Background {
				defer foreground.Add(-1)
				errs[i] = g.Run()
				return
			}
			for rounds[i] == 0 || foreground.Load() > 0 {
				rounds[i]++
				if errs[i] = g.Run(); errs[i] != nil {
					return
				}
			}
		})
	}
	if err := wg.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", gs[i].Name, err)
		}
	}
}

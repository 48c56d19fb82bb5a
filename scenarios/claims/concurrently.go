package claims

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Goroutine is one body a RaceFree check runs on a real goroutine: it
// returns its first failure and stops there, instead of calling t.Fatal
// off the test's goroutine.
type Goroutine struct {
	Name string
	Run  func() error
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
// read after the wait: collecting the failures adds no synchronization
// between the goroutines that could order the accesses the race detector
// is there to find.
func Concurrently(t testing.TB, r rt.Runtime, gs ...Goroutine) {
	t.Helper()
	errs := make([]error, len(gs))
	wg := r.NewWaitGroup("claims.concurrently")
	wg.Add(len(gs))
	for i, g := range gs {
		r.Go(g.Name, func() {
			defer wg.Done()
			errs[i] = g.Run()
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

package main

import (
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"testing"
	"testing/synctest"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Synctest runs w with rt.Real inside a testing/synctest bubble (virtual
// time, Go's own scheduler) again and again until its checker fails or the
// wall-clock cap. It needs the test's t: a bubble lives inside a test.
func Synctest(t *testing.T, w *bugbench.Workload, mutant string, caps Caps) Attempt {
	return repeat(mutant, "synctest", caps, func() error {
		var err error
		synctest.Test(t, func(*testing.T) { err = w.Run(rt.Real()) })
		return err
	})
}

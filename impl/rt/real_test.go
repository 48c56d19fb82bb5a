package rt_test

import (
	"testing"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/rt/rtconform"
)

// TestRealConforms runs the conformance suite on real goroutines and the wall
// clock; make test runs it under the race detector.
func TestRealConforms(t *testing.T) {
	rtconform.Run(t, rtconform.Env{
		Name: "real",
		Run:  func(t *testing.T, body func(rt.Runtime)) { body(rt.Real()) },
	})
}

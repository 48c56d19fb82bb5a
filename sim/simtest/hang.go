package simtest

import (
	"errors"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// hangAfter is a run's Config.HangAfter: -sim.hang when given (0: never),
// else the test's own Config.HangAfter, else the flag's default.
func (st settings) hangAfter(own time.Duration) time.Duration {
	if own != 0 && !wasGiven("sim.hang") {
		return own
	}
	if st.hang == 0 {
		return -1
	}
	return st.hang
}

// errHungNoArtifacts: a hung run is not run again for its artifacts.
var errHungNoArtifacts = errors.New("a hung run is not run again for them (it would wedge another goroutine for -sim.hang); the failure above has its stack")

// artifactsUnlessHung writes a failing seed's artifacts, unless the run
// hung: re-running it would only hang again, and its trace is lost.
func (h *harness) artifactsUnlessHung(t *testing.T, seed uint64, res sim.Result) (string, error) {
	if f := res.Failure(); f != nil && f.Kind == sim.FailHang {
		return "", errHungNoArtifacts
	}
	return h.writeArtifacts(t, seed, res)
}

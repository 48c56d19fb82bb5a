// Package screen is a fixture of the audit runner's tests: two claim checks
// whose "mutants" (the schema binary's switch, WINDTUNNEL_MUTANT) are caught
// at different seeds, for the one-seed screen (findings.ScreenEnv).
//
//   - fixture-first breaks TestLate at every seed: the screen catches it,
//     after TestEarly has flown one seed instead of its ten.
//   - fixture-late breaks TestEarly from its third seed on: the screen
//     passes it and the full run catches it there.
//
// TestEarly requires a probe that only its later seeds reach: at one seed,
// unscreened, it fails without any mutant. Each test writes how many seeds
// it flew to $SCREEN_FLIES when it ends.
package screen

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

const seeds = 10

// index is the regular seed's index of the run (SeedAt), -1 when none.
func index(test string, s *sim.Sim) int {
	for i := range seeds {
		if simtest.SeedAt(test, i) == s.Seed() {
			return i
		}
	}
	return -1
}

// flies counts the seeds a test flew, written to $SCREEN_FLIES at its end.
func flies(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	t.Cleanup(func() {
		path := os.Getenv("SCREEN_FLIES")
		if path == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "%s %d\n", t.Name(), n.Load()); err != nil {
			t.Error(err)
		}
	})
	return &n
}

type result struct{ wrong int64 }

// check declares the fixture's check under a claim of CLAIMS.md (claims.Run
// refuses others); the fixture's verdicts are its own, not the claim's.
func check(t *testing.T, claim, mutant string, failFrom int, probes []claims.Probe) {
	n := flies(t)
	claims.Run(t, claims.Check[result]{
		Claim:   claim,
		Options: simtest.Options{Seeds: seeds},
		Fly: func(s *sim.Sim, _ claims.Bound) (result, error) {
			n.Add(1)
			i := index(t.Name(), s)
			if i >= 1 {
				s.Probe("later-seed")
			}
			if os.Getenv("WINDTUNNEL_MUTANT") == mutant && i >= failFrom {
				return result{wrong: 1}, errors.New("caught")
			}
			return result{}, nil
		},
		Sample:   func(r result) claims.Sample { return claims.Sample{Of: 1, Wrong: r.wrong} },
		Measured: func(o claims.Outcome) string { return fmt.Sprintf("%d of %d wrong", o.Wrong, o.Of) },
		Probes:   probes,
	})
}

func TestEarly(t *testing.T) {
	check(t, "LF-1", "fixture-late", 2, []claims.Probe{{Name: "later-seed", What: "a seed after the first", Min: 3}})
}

func TestLate(t *testing.T) {
	check(t, "LF-2", "fixture-first", 0, nil)
}

// TestSub's configuration needs its probe far more often under
// fixture-verdict than its seeds reach it: a verdict over all the seeds of a
// subtest, which no single seed fails.
func TestSub(t *testing.T) {
	t.Run("perKey=4", func(t *testing.T) {
		min := int64(1)
		if os.Getenv("WINDTUNNEL_MUTANT") == "fixture-verdict" {
			min = 100
		}
		check(t, "LF-3", "", seeds, []claims.Probe{{Name: "later-seed", What: "a seed after the first", Min: min}})
	})
}

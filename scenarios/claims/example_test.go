package claims_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// ageCheck is a first claim check, whole: OC-2's "open set max age" (an
// answer served for less than 1 s after its read) on a toy cache. In a
// family's package it runs as
//
//	func TestOC2_ToyCacheAge(t *testing.T) { claims.Run(t, ageCheck) }
var ageCheck = claims.Check[claims.Sample]{
	Claim:   "OC-2",
	Bound:   "open set max age",
	Options: simtest.Options{Seeds: 3},
	Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
		var smp claims.Sample
		c := cache{maxAge: b.Duration()}
		// A reader every 5 ms for 1.5 s: the answers age up to the bound.
		for range 300 {
			age := c.read(s.Now())
			smp.Observe(age.Seconds(), func() string { return fmt.Sprintf("an answer %v old", age) })
			if err := s.Sleep(context.Background(), 5*time.Millisecond); err != nil {
				return smp, err
			}
		}
		return smp, nil
	},
	Measured: func(o claims.Outcome) string { return "worst age " + o.WorstText() },
}

// cache serves the entry it filled last while the entry is younger than
// maxAge, and fills it anew otherwise.
type cache struct {
	maxAge time.Duration
	filled time.Time
	full   bool
}

func (c *cache) read(now time.Time) time.Duration {
	if !c.full || now.Sub(c.filled) >= c.maxAge {
		c.filled, c.full = now, true
	}
	return now.Sub(c.filled)
}

func Example() {
	o := goTest("TestOC2_ToyCacheAge", func(t *testing.T) claims.Outcome { return claims.Run(t, ageCheck) })
	fmt.Println("worst:", o.WorstText(), "of", o.Bound, "problems:", len(o.Problems))
	// Output:
	// worst: 995ms of < 1s problems: 0
}

// goTest runs f as go test runs a test, with its log discarded: an example
// has no *testing.T of its own to hand claims.Run.
func goTest(name string, f func(t *testing.T) claims.Outcome) claims.Outcome {
	var o claims.Outcome
	stdout := os.Stdout
	if devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stdout = devNull
		defer func() { os.Stdout = stdout; devNull.Close() }()
	}
	// RunTests selects with the process's -test.run and -test.skip, which
	// name the example, not the test it runs: clear them meanwhile.
	for _, name := range []string{"test.run", "test.skip"} {
		if fl := flag.Lookup(name); fl != nil {
			was := fl.Value.String()
			_ = fl.Value.Set("")
			defer func() { _ = fl.Value.Set(was) }()
		}
	}
	testing.RunTests(func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) },
		[]testing.InternalTest{{Name: name, F: func(t *testing.T) { o = f(t) }}})
	return o
}

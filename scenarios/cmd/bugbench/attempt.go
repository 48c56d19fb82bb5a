package main

import (
	"errors"
	"fmt"
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// The approaches, in the table's order.
var (
	Strategies = []string{"random", "pct", "pos", "surw"}
	Peers      = []string{"stress", "synctest"}
)

// Attempt is one approach's try at one mutant: how many runs and how much
// wall time it took to catch it, or that it did not within its caps.
type Attempt struct {
	Mutant   string        `json:"mutant"`
	Approach string        `json:"approach"`
	Caught   bool          `json:"caught"`
	Runs     int           `json:"runs"`              // seeds or repetitions to the first catch, that one included
	Wall     time.Duration `json:"wall_ns"`           // wall time to the first catch, or to the cap
	Failure  string        `json:"failure,omitempty"` // the checker's words
	Note     string        `json:"note,omitempty"`    // why it stopped, or why it could not run
	// After the first catch the approach goes on to its caps, for a rate
	// that one lucky or unlucky first catch does not show: Failing of
	// Tried runs caught the mutant.
	Tried   int           `json:"tried"`
	Failing int           `json:"failing"`
	Spent   time.Duration `json:"spent_ns"` // wall time of all Tried runs
}

// Rate is the share of runs that caught the mutant.
func (a Attempt) Rate() float64 {
	if a.Tried == 0 {
		return 0
	}
	return float64(a.Failing) / float64(a.Tried)
}

// Caps bound an approach's try: windtunnel stops at Seeds seeds, every
// approach at Wall.
type Caps struct {
	Seeds int
	Wall  time.Duration
	// PCTDepth is PCT's bug depth d (d-1 priority change points); 0 means
	// DefaultPCTDepth.
	PCTDepth int
}

// DefaultPCTDepth is PCT's depth unless a run asks for another.
const DefaultPCTDepth = 3

func (c Caps) pctDepth() int {
	if c.PCTDepth == 0 {
		return DefaultPCTDepth
	}
	return c.PCTDepth
}

// Windtunnel runs w under one strategy, seed after seed, until its checker
// fails or a cap. PCT's calibration run and SURW's profile run count in its
// wall time: a user pays for them too.
func Windtunnel(w *bugbench.Workload, mutant, strategy string, caps Caps) Attempt {
	a := Attempt{Mutant: mutant, Approach: strategy}
	start := time.Now()
	body := func(s *sim.Sim) {
		if err := w.Run(s); err != nil {
			s.Failf("%v", err)
		}
	}
	const calibrationSeed = 0
	var mk func() sim.Strategy
	switch strategy {
	case "random":
		mk = sim.RandomWalk
	case "pos":
		mk = sim.POS
	case "pct":
		steps := sim.Run(sim.Config{Seed: calibrationSeed, Selected: w.Selected}, body).Steps
		mk = func() sim.Strategy { return sim.PCT(caps.pctDepth(), max(steps, 1)) }
	case "surw":
		st, profile := sim.ProfileSURW()
		sim.Run(sim.Config{Seed: calibrationSeed, Strategy: st, Selected: w.Selected}, body)
		p := profile()
		mk = func() sim.Strategy { return sim.SURW(p) }
	default:
		a.Note = fmt.Sprintf("unknown strategy %q", strategy)
		return a
	}
	cfg := func(seed uint64) sim.Config {
		return sim.Config{Seed: seed, Strategy: mk(), Selected: w.Selected}
	}
	for seed := uint64(1); a.Tried < caps.Seeds; seed++ {
		if time.Since(start) > caps.Wall {
			a.Note = fmt.Sprintf("wall-clock cap of %v", caps.Wall)
			break
		}
		a.Tried++
		res := sim.Run(cfg(seed), body)
		if res.Err == nil {
			continue
		}
		a.Failing++
		if !a.Caught {
			a.Caught, a.Runs, a.Wall = true, a.Tried, time.Since(start)
			a.Failure, a.Note = failureText(res.Err), fmt.Sprintf("seed %#x", seed)
		}
	}
	a.Spent = time.Since(start)
	if !a.Caught {
		a.Runs, a.Wall = a.Tried, a.Spent
		if a.Note == "" {
			a.Note = fmt.Sprintf("seed cap of %d", caps.Seeds)
		}
	}
	return a
}

// Stress runs w on real goroutines again and again until its checker fails
// or the wall-clock cap: go test -race -count=N. Whether the race detector
// is on is the binary's (make bugbench builds this approach with -race).
func Stress(w *bugbench.Workload, mutant string, caps Caps) Attempt {
	return repeat(mutant, "stress", caps, func() error { return w.Run(rt.Real()) })
}

// repeat runs one try after another until the wall cap, noting the first
// that fails.
func repeat(mutant, approach string, caps Caps, try func() error) Attempt {
	a := Attempt{Mutant: mutant, Approach: approach}
	start := time.Now()
	for time.Since(start) < caps.Wall {
		a.Tried++
		err := try()
		if err == nil {
			continue
		}
		a.Failing++
		if !a.Caught {
			a.Caught, a.Runs, a.Wall, a.Failure = true, a.Tried, time.Since(start), failureText(err)
		}
	}
	a.Spent = time.Since(start)
	if !a.Caught {
		a.Runs, a.Wall = a.Tried, a.Spent
		a.Note = fmt.Sprintf("wall-clock cap of %v", caps.Wall)
	}
	return a
}

// failureText is the first line of a failure, for the table.
func failureText(err error) string {
	var f *sim.Failure
	msg := err.Error()
	if errors.As(err, &f) {
		msg = f.Message
	}
	for i, c := range msg {
		if c == '\n' {
			return msg[:i]
		}
	}
	return msg
}

package sim

// Bounded-exhaustive schedule exploration.
//
// Random walk and PCT sample schedules; Explore enumerates them. It runs the
// program again and again from the same seed. Each run is under a strategy
// that follows a prefix of scheduling decisions and then a default rule.
// It searches the tree of decisions depth first. After each run it
// backtracks to the deepest decision with an alternative left; the next
// run follows the decisions down to it and takes the alternative. The
// world's random stream is separate from the schedule's. So every run sees
// the same workload and faults; only the interleaving changes.
//
// # Terms
//
// A step is one scheduling decision and what follows it: the chosen task
// resumes at its scheduling point and runs until its next one (or until it
// blocks or ends). A schedule is a maximal sequence of decisions: the run
// ends because main returned or the run failed. Two schedules are distinct
// when their decision lists differ. A decision point with one runnable task
// is a decision with one choice; it does not multiply the count.
//
// A preemption (CHESS, Musuvathi and Qadeer, PLDI 2007) is a decision that
// switches away from the task that ran the previous step although that task
// is still runnable: its step ended at a scheduling point where it could
// have gone on. Switching after a task blocked, ended or slept is free, even
// if the clock has woken it again meanwhile. The default rule never
// preempts: it keeps running the previous task while it can, and otherwise
// runs the runnable task with the lowest id. With MaxPreemptions = P the
// search covers exactly the schedules with at most P preemptions; most
// concurrency bugs need only one or two (the CHESS result).
//
// # Reductions
//
// Many schedules differ only in the order of steps that commute, and end in
// the same state. Each step has a footprint: the sim object (mutex,
// RWMutex, event, wait group) of the operation it resumed in, widened by
// what it did before its next scheduling point. Two steps of different
// tasks are dependent when their footprints are the same object or either
// is "anything"; otherwise they commute. Footprints:
//
//   - Lock, Unlock, TryLock, RLock, RUnlock, Event.Set/Wait, WaitGroup
//     Add/Done/Wait: their object. Blocking and being woken stay on it.
//   - "Anything": the step after Yield, Sleep or AfterFunc, and an
//     operation that waits with a cancellable context (any step may cancel
//     it). Also the step in which main returns or the run fails (it stops
//     every task). Also a step that calls Sim.Steps or a CancelFunc, or that
//     operates on two objects (say Event.IsSet while it holds a mutex, or Go
//     right after Unlock).
//   - Spawning (Go, AfterFunc, Timer.Stop): a spawn object, because task
//     ids follow spawn order. Sim.Rand: the world stream's object.
//     Event.IsSet: the event.
//   - A task's first step, and the caller's step after Go: an object of the
//     task's own, dependent with nothing but "anything". What runs there
//     before any scheduling point can only touch state handed over by the
//     spawn (which orders the new task after its parent) or state of its
//     own. This departs from treating Go as "anything": with that, every
//     spawn races with every step of the tasks already running, and the
//     search multiplies for no new state.
//
// ReductionSleepSets (Godefroid 1996) skips a branch when an equivalent
// branch, differing only by commuting steps, has been explored already;
// runs where every runnable task is asleep are cut short. ReductionDPOR is
// dynamic partial-order reduction: each run tracks happens-before with
// vector clocks, and each race it observes (dependent steps of different
// tasks, not ordered otherwise) adds an alternative that reverses it, at the
// node before the earlier step. Without a preemption bound it is
// source-DPOR with sleep sets (Abdulla, Aronis, Jonsson and Sagonas, POPL
// 2014): one run per equivalence class, apart from a few cut short. With a
// bound it is BPOR (Coons, Musuvathi and McKinley, OOPSLA 2013): Flanagan and
// Godefroid's DPOR (POPL 2005) plus the same alternative at the last context
// switch before the racing step. Plain DPOR under a bound misses states.
// Sleep sets are off then, since they are unsound under a bound, and
// ReductionSleepSets with a bound is an error.
//
// Every blocked lock attempt is a step of its own (the task runs, finds the
// lock held, queues): programs with much lock contention have many
// equivalence classes, and a preemption bound is the way to keep them
// small.
//
// The reduction's soundness rests on one assumption the simulator cannot
// check, as it cannot see plain memory accesses between scheduling points:
// the program is data-race-free with respect to sim objects. Every variable
// that two tasks share is read and written in one of three ways. It is
// accessed only while holding a sim lock that guards it, or handed over
// through a sim object (an event set after the write, a wait group, Go), or
// accessed only in steps that are dependent with everything (for example
// right after a Yield). A program that breaks this, such as a variable
// written under two different locks, may lose
// states under a reduction (TestReductionAssumesDataRaceFreedom shows one);
// ReductionNone makes no assumption. Code that keeps the *rand.Rand of
// Sim.Rand and draws from it later hides those draws: call Sim.Rand at each
// draw. StepDuration moves the clock on every step, so every step observes
// how many steps ran before it. A reduction therefore needs StepDuration 0.
//
// # Results and replay
//
// Explore reports the schedules run to their end, the branches the
// reduction pruned (each the root of a skipped subtree), and whether the
// space was exhausted. A space larger than MaxSchedules ends with
// Exhausted = false and the counts, never silently. A failing schedule
// comes with its decision list: Run with the same Config (same Seed) and
// Strategy: Replay(decisions) reproduces it exactly.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// Reduction selects how Explore skips schedules equivalent to explored ones.
type Reduction uint8

const (
	// ReductionNone explores every schedule within the preemption bound.
	ReductionNone Reduction = iota
	// ReductionSleepSets skips branches whose first step commutes with
	// everything since an equivalent branch was explored. It needs
	// MaxPreemptions = -1 (unbounded).
	ReductionSleepSets
	// ReductionDPOR is dynamic partial-order reduction: only alternatives
	// that reverse an observed race are explored. Under a preemption bound
	// it is BPOR.
	ReductionDPOR
)

// String names the reduction as it appears in reports.
func (r Reduction) String() string {
	switch r {
	case ReductionNone:
		return "none"
	case ReductionSleepSets:
		return "sleepsets"
	case ReductionDPOR:
		return "dpor"
	}
	return fmt.Sprintf("Reduction(%d)", uint8(r))
}

// unboundedPreemptions (-1) as ExploreOptions.MaxPreemptions explores schedules
// with any number of preemptions.
const unboundedPreemptions = -1

// defaultMaxSchedules bounds the runs of an exploration when
// ExploreOptions.MaxSchedules is 0.
const defaultMaxSchedules = 100_000

// ExploreOptions bounds and shapes an exploration. The zero value explores
// every non-preemptive schedule without reduction, up to
// 100,000 runs.
type ExploreOptions struct {
	// MaxPreemptions is the preemption bound P: only schedules with at most
	// P preemptions are explored. -1 lifts it.
	MaxPreemptions int
	// Reduction skips schedules equivalent to explored ones.
	Reduction Reduction
	// MaxSchedules bounds the number of runs (0: 100,000). When
	// the bound ends the search early, the result says Exhausted = false.
	MaxSchedules int64
	// StopOnFailure ends the search at the first failing schedule. Without
	// it the search goes on, counts the failures and keeps the first.
	StopOnFailure bool
	// Visit, if set, is called after every schedule run to its end with its
	// Result, on the caller's goroutine. It is a place to look at the final
	// state the program's closures hold, or to collect statistics. To save
	// time, Result.Tail is filled only for failed runs.
	Visit func(r Result)
}

// ExploreResult is the outcome of an exploration.
type ExploreResult struct {
	// Explored counts schedules run to their end (failed ones included).
	Explored int64
	// Pruned counts branches within the preemption bound that the
	// unreduced search would have entered and the reduction skipped, each
	// the root of a whole subtree of schedules. Runs cut short because every
	// runnable task was asleep count here too.
	Pruned int64
	// Runs counts runs of the program: Explored plus runs cut short.
	Runs int64
	// Exhausted reports that every schedule within the bound was explored
	// or proven equivalent to an explored one. It is false when the search
	// stopped at MaxSchedules, at a failure (StopOnFailure) or on an error.
	Exhausted bool
	// MaxDepth is the number of steps of the longest schedule.
	MaxDepth int64
	// MaxPreemptionsUsed is the most preemptions any explored schedule had.
	MaxPreemptionsUsed int
	// Failures counts failing schedules.
	Failures int64
	// Failure is the first failing schedule's failure, or nil.
	Failure *Failure
	// Decisions is the first failing schedule's decision list: Run with the
	// same Config and Strategy: Replay(Decisions) reproduces it.
	Decisions []int32
	// FailedRun is the full Result of that run (trace tail, header).
	FailedRun Result
	// Err reports invalid options, or a program that is not deterministic
	// under a fixed schedule (it diverged from a recorded prefix).
	Err error
}

// proven reports that the whole bounded space was explored without a
// failure or error.
func (r ExploreResult) proven() bool {
	return r.Err == nil && r.Exhausted && r.Failures == 0
}

// String summarises the result in one line.
func (r ExploreResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "explored %d schedules, pruned %d branches, %d runs, max depth %d steps, max %d preemptions",
		r.Explored, r.Pruned, r.Runs, r.MaxDepth, r.MaxPreemptionsUsed)
	switch {
	case r.Err != nil:
		fmt.Fprintf(&b, "; error: %v", r.Err)
	case r.Exhausted:
		b.WriteString("; space exhausted")
	default:
		b.WriteString("; NOT exhausted")
	}
	if r.Failures > 0 {
		fmt.Fprintf(&b, "; %d failing, first: %v (replay: %d decisions)", r.Failures, r.Failure, len(r.Decisions))
	}
	return b.String()
}

func (o ExploreOptions) validate(cfg Config) (ExploreOptions, error) {
	if o.MaxPreemptions < unboundedPreemptions {
		return o, fmt.Errorf("sim: MaxPreemptions must be at least 0, or -1 (unbounded); got %d", o.MaxPreemptions)
	}
	if o.MaxSchedules < 0 {
		return o, fmt.Errorf("sim: MaxSchedules must not be negative, got %d", o.MaxSchedules)
	}
	if o.MaxSchedules == 0 {
		o.MaxSchedules = defaultMaxSchedules
	}
	switch o.Reduction {
	case ReductionNone, ReductionDPOR:
	case ReductionSleepSets:
		if o.MaxPreemptions != unboundedPreemptions {
			return o, errors.New("sim: ReductionSleepSets is unsound under a preemption bound (Coons et al., OOPSLA 2013); use ReductionDPOR, which compensates, or MaxPreemptions = -1 (unbounded)")
		}
	default:
		return o, fmt.Errorf("sim: unknown reduction %d (want ReductionNone, ReductionSleepSets or ReductionDPOR)", o.Reduction)
	}
	if o.Reduction != ReductionNone && cfg.StepDuration > 0 {
		return o, errors.New("sim: a reduction needs StepDuration 0: with time moving on every step, every step observes how many ran before it, so no two steps commute")
	}
	if cfg.Strategy != nil {
		return o, errors.New("sim: Explore chooses the schedule itself; leave Config.Strategy nil")
	}
	return o, nil
}

// Explore runs main under every schedule within the preemption bound,
// depth first, skipping schedules equivalent to explored ones when a
// reduction is on, until the space is exhausted, MaxSchedules runs have
// been made, or (with StopOnFailure) a schedule fails. Every run is a fresh
// Run of main with cfg: the same seed, hence the same workload, and the
// same limits, which bound each schedule (MaxSteps 0 means
// protocol.DefaultExploreMaxSteps here).
//
// A schedule is a maximal list of scheduling decisions (main returned or the
// run failed). A preemption is a decision that switches away from a task
// that could have gone on (its last step ended at a scheduling point, not
// blocked or done); the default continuation never preempts.
//
// A reduction assumes the program is data-race-free with respect to sim
// objects. A variable two tasks share is touched only under a sim lock that
// guards it, after a hand-over through a sim object, or right after a
// Yield. Steps on different objects commute; Yield, Sleep, AfterFunc,
// cancellable contexts and the step that ends the run commute with nothing.
// ReductionNone assumes nothing. The comment at the top of
// explore.go has the full rules.
//
// A failing schedule replays with Run(cfg, Strategy: Replay(res.Decisions)).
// Typical use, proving a small configuration:
//
//	res := sim.Explore(sim.Config{Seed: 1}, sim.ExploreOptions{
//		MaxPreemptions: 2, Reduction: sim.ReductionDPOR, MaxSchedules: 1e6,
//	}, body)
//	require.True(t, res.Exhausted && res.Failures == 0, res.String())
func Explore(cfg Config, opts ExploreOptions, main func(s *Sim)) ExploreResult {
	if main == nil {
		return ExploreResult{Err: errors.New("sim: Explore needs a main function")}
	}
	opts, err := opts.validate(cfg)
	if err != nil {
		return ExploreResult{Err: err}
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = protocol.DefaultExploreMaxSteps
	}
	if _, err := cfg.withDefaults(); err != nil {
		return ExploreResult{Err: err}
	}
	x := newExplorer(opts)
	cfg.Strategy = x
	cfg.tailOnFailure = true
	var res ExploreResult
	for {
		r := Run(cfg, main)
		res.Runs++
		if x.err != nil {
			res.Err = x.err
			break
		}
		if r.Err != nil && r.Failure() == nil {
			res.Err = r.Err
			break
		}
		if !x.cut {
			if opts.Visit != nil {
				opts.Visit(r)
			}
			res.Explored++
			res.MaxDepth = max(res.MaxDepth, r.Steps)
			res.MaxPreemptionsUsed = max(res.MaxPreemptionsUsed, x.preemptionsUsed())
			if f := r.Failure(); f != nil {
				res.Failures++
				if res.Failure == nil {
					res.Failure = f
					res.Decisions = x.decisions()
					res.FailedRun = r
				}
				if opts.StopOnFailure {
					break
				}
			}
		}
		if !x.backtrack() {
			res.Exhausted = true
			break
		}
		if res.Runs >= opts.MaxSchedules {
			break
		}
	}
	res.Pruned = x.pruned
	return res
}

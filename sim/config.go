package sim

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// Defaults for the limits of a run. Every run is bounded: a run that exceeds
// a limit fails with its seed instead of hanging.
const (
	defaultMaxSteps   = 10_000_000
	defaultMaxTasks   = 100_000
	defaultMaxVirtual = 24 * time.Hour
	defaultTraceTail  = 64
)

// abandonCheckSteps is how often a run reads Config.Abandon: often enough
// that an abandoned run ends within a millisecond or so, rarely enough that
// the read costs nothing per step.
const abandonCheckSteps = 4096

// Epoch is the virtual instant every run starts at. It is fixed so that the
// same seed gives the same timestamps, and far from the present so that a
// virtual time is never mistaken for a real one.
var Epoch = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// Config describes one run. The zero value (plus a seed) is a valid config.
type Config struct {
	// Seed drives every random choice of the run: the schedule, and through
	// Sim.Rand the workload and the faults.
	Seed uint64

	// Strategy chooses which runnable task runs at each scheduling point.
	// nil means RandomWalk().
	Strategy Strategy

	// MaxSteps bounds the number of scheduling steps (0: 10,000,000).
	MaxSteps int64
	// Abandon, when set, is read every few thousand steps: once true,
	// the run ends there (Result.Abandoned, and an error saying so). A
	// harness that runs seeds ahead of their reports stops the ones it no
	// longer needs (the seeds after one that failed) instead of paying for
	// them; an abandoned run's result means nothing. Reading it changes no
	// decision of the run, so a run that is not abandoned is the same run.
	Abandon *atomic.Bool
	// MaxTasks bounds the number of tasks ever started (0: 100,000).
	MaxTasks int
	// MaxVirtual bounds the virtual time of the run (0: 24h).
	MaxVirtual time.Duration
	// HangAfter fails the run when a task runs this long in wall time
	// without reaching a scheduling point: it blocks outside the simulator
	// (a channel, a sync lock, I/O) or loops (0: 10s; negative:
	// never). A task that computes gets six times as long: on a loaded
	// machine it may be slow work. See hang.go.
	HangAfter time.Duration

	// StepDuration is virtual time added after every scheduling step, so that
	// time passes while tasks compute. The default, 0, keeps time still while
	// any task can run. Time then moves only through sleeps, timers and the
	// latencies the world models, which makes every virtual duration in a
	// report traceable to a modelled cause.
	StepDuration time.Duration

	// IdleWake, when positive, is the granularity of the clock's jumps while
	// no task can run: the clock moves to the next timer rounded up to a
	// whole number of IdleWake from where it stood, and every timer due by
	// then fires together. Go's runtime, with nothing to run, sleeps in
	// epoll for whole milliseconds (at least one), so timers that fall due
	// within one sleep wake their goroutines at once. 0 jumps to the timer.
	IdleWake time.Duration

	// LeakCheck keeps the run going when main returns, until no task can
	// run and no timer is pending, and fails it (FailLeak) when tasks are
	// left blocked forever: the goroutine-leak oracle. LeakSettle bounds that
	// phase in virtual time (0: 1m); tasks still blocked then, outside a
	// Sleep, are reported too.
	LeakCheck  bool
	LeakSettle time.Duration
	// LeakSettleSteps bounds the settle phase in steps as LeakSettle does
	// in virtual time (0: 1,000,000): a program whose tasks need longer to
	// finish after main returns needs both raised.
	LeakSettleSteps int64

	// TraceTail is how many trace events a failure report shows (0: 64).
	TraceTail int
	// TraceOut, if set, receives every trace event, one per line.
	TraceOut io.Writer
	// RecordDecisions keeps the list of scheduling decisions in the Result,
	// for replay and for the exhaustive explorer.
	RecordDecisions bool

	// Selected names the events SURW samples uniformly: it is asked once
	// about each sim object as it is made ("mutex cache-entries#3") and
	// once about AnyObject (Yield, Sleep, Go: the database's and bus's
	// calls yield). nil selects every operation but a task's first step.
	Selected func(object string) bool

	// Record keeps the run's full record in Result.Record (sim/record): at
	// most MaxRecord events (0: 1<<20).
	Record    bool
	MaxRecord int

	// tailOnFailure keeps no trace for Result.TraceTail of a passing run: Explore makes
	// many runs and reports only failing ones.
	tailOnFailure bool
	// replay records and replays the world's choices, for shrinkers and
	// harnesses (protocol.ConfigOf sets it).
	replay protocol.Options
	// keyIndex indexes replay.Keeps' keys (withDefaults builds it as it
	// checks them): nil unless the replay is keyed.
	keyIndex *protocol.KeyIndexes
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxSteps < 0 {
		return c, fmt.Errorf("sim: MaxSteps must be positive, got %d", c.MaxSteps)
	}
	if c.MaxTasks < 0 {
		return c, fmt.Errorf("sim: MaxTasks must be positive, got %d", c.MaxTasks)
	}
	if c.MaxVirtual < 0 {
		return c, fmt.Errorf("sim: MaxVirtual must be positive, got %v", c.MaxVirtual)
	}
	if c.StepDuration < 0 {
		return c, fmt.Errorf("sim: StepDuration must not be negative, got %v", c.StepDuration)
	}
	if c.LeakSettleSteps < 0 {
		return c, fmt.Errorf("sim: LeakSettleSteps must not be negative, got %d", c.LeakSettleSteps)
	}
	if c.IdleWake < 0 {
		return c, fmt.Errorf("sim: IdleWake must not be negative, got %v", c.IdleWake)
	}
	if c.replay.MaxChoices < 0 {
		return c, fmt.Errorf("sim: MaxChoices must not be negative, got %d", c.replay.MaxChoices)
	}
	if c.MaxRecord < 0 {
		return c, fmt.Errorf("sim: MaxRecord must not be negative, got %d", c.MaxRecord)
	}
	if (c.replay.Choices != nil || c.replay.Keeps.Operations != nil || c.replay.Keeps.Faults != nil) && !c.replay.ReplayChoices {
		return c, fmt.Errorf("sim: Choices or Keeps given without ReplayChoices: set ReplayChoices to replay them")
	}
	ix, err := c.replay.Keeps.IndexKeys(len(c.replay.Choices))
	if err != nil {
		return c, err
	}
	c.keyIndex = ix
	if c.TraceTail < 0 {
		return c, fmt.Errorf("sim: TraceTail must not be negative, got %d", c.TraceTail)
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = defaultMaxSteps
	}
	if c.MaxTasks == 0 {
		c.MaxTasks = defaultMaxTasks
	}
	if c.MaxVirtual == 0 {
		c.MaxVirtual = defaultMaxVirtual
	}
	if c.HangAfter == 0 {
		c.HangAfter = protocol.DefaultHangAfter
	}
	if c.LeakSettle < 0 {
		return c, fmt.Errorf("sim: LeakSettle must not be negative, got %v", c.LeakSettle)
	}
	if c.LeakSettle == 0 {
		c.LeakSettle = defaultLeakSettle
	}
	if c.LeakSettleSteps == 0 {
		c.LeakSettleSteps = defaultLeakSettleSteps
	}
	if c.TraceTail == 0 {
		c.TraceTail = defaultTraceTail
	}
	if c.replay.MaxChoices == 0 {
		c.replay.MaxChoices = protocol.DefaultMaxChoices
	}
	if c.MaxRecord == 0 {
		c.MaxRecord = defaultMaxRecord
	}
	if c.Strategy == nil {
		c.Strategy = RandomWalk()
	}
	return c, nil
}

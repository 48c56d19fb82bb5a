package sim

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Defaults for the limits of a run. Every run is bounded: a run that exceeds
// a limit fails with its seed instead of hanging.
const (
	DefaultMaxSteps   = 10_000_000
	DefaultMaxTasks   = 100_000
	DefaultMaxVirtual = 24 * time.Hour
	DefaultTraceTail  = 64
)

// AbandonCheckSteps is how often a run reads Config.Abandon: often enough
// that an abandoned run ends within a millisecond or so, rarely enough that
// the read costs nothing per step.
const AbandonCheckSteps = 4096

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

	// MaxSteps bounds the number of scheduling steps (0: DefaultMaxSteps).
	MaxSteps int64
	// Abandon, when set, is read every AbandonCheckSteps steps: once true,
	// the run ends there (Result.Abandoned, and an error saying so). A
	// harness that runs seeds ahead of their reports stops the ones it no
	// longer needs (the seeds after one that failed) instead of paying for
	// them; an abandoned run's result means nothing. Reading it changes no
	// decision of the run, so a run that is not abandoned is the same run.
	Abandon *atomic.Bool
	// MaxTasks bounds the number of tasks ever started (0: DefaultMaxTasks).
	MaxTasks int
	// MaxVirtual bounds the virtual time of the run (0: DefaultMaxVirtual).
	MaxVirtual time.Duration
	// HangAfter fails the run when a task runs this long in wall time
	// without reaching a scheduling point: it blocks outside the simulator
	// (a channel, a sync lock, I/O) or loops (0: DefaultHangAfter; negative:
	// never). See hang.go.
	HangAfter time.Duration

	// StepDuration is virtual time added after every scheduling step, so that
	// time passes while tasks compute. The default, 0, keeps time still while
	// any task can run: time then moves only through sleeps, timers and the
	// latencies the world models, which makes every virtual duration in a
	// report traceable to a modelled cause.
	StepDuration time.Duration

	// TraceTail is how many trace events a failure report shows (0:
	// DefaultTraceTail).
	TraceTail int
	// TraceOut, if set, receives every trace event, one per line.
	TraceOut io.Writer
	// RecordDecisions keeps the list of scheduling decisions in the Result,
	// for replay and for the exhaustive explorer.
	RecordDecisions bool

	// RecordChoices keeps the world's choices in the Result (Choices,
	// KeepSites): every draw from Sim.Rand and every Keep answer, for a
	// shrinker to edit (choices.go). At most MaxChoices are kept (0:
	// DefaultMaxChoices).
	RecordChoices bool
	MaxChoices    int
	// ReplayChoices makes the world hand out Choices instead of the seed's
	// draws (the smallest value past the end) and answer Keep from Keeps
	// (false past the end of a kind's list). The schedule still comes from
	// the strategy.
	ReplayChoices bool
	Choices       []uint64
	Keeps         Keeps

	// Record keeps the run's full record in Result.Record (record.go): at
	// most MaxRecord events (0: DefaultMaxRecord).
	Record    bool
	MaxRecord int

	// tailOnFailure keeps no trace for Result.TraceTail of a passing run: Explore makes
	// many runs and reports only failing ones.
	tailOnFailure bool
	// keyIndex indexes Keeps' keys (withDefaults builds it as it checks
	// them): nil unless the replay is keyed.
	keyIndex *keyIndexes
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
	if c.MaxChoices < 0 {
		return c, fmt.Errorf("sim: MaxChoices must not be negative, got %d", c.MaxChoices)
	}
	if c.MaxRecord < 0 {
		return c, fmt.Errorf("sim: MaxRecord must not be negative, got %d", c.MaxRecord)
	}
	if (c.Choices != nil || c.Keeps.Operations != nil || c.Keeps.Faults != nil) && !c.ReplayChoices {
		return c, fmt.Errorf("sim: Choices or Keeps given without ReplayChoices: set ReplayChoices to replay them")
	}
	ix, err := c.Keeps.indexKeys(len(c.Choices))
	if err != nil {
		return c, err
	}
	c.keyIndex = ix
	if c.TraceTail < 0 {
		return c, fmt.Errorf("sim: TraceTail must not be negative, got %d", c.TraceTail)
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxTasks == 0 {
		c.MaxTasks = DefaultMaxTasks
	}
	if c.MaxVirtual == 0 {
		c.MaxVirtual = DefaultMaxVirtual
	}
	if c.HangAfter == 0 {
		c.HangAfter = DefaultHangAfter
	}
	if c.TraceTail == 0 {
		c.TraceTail = DefaultTraceTail
	}
	if c.MaxChoices == 0 {
		c.MaxChoices = DefaultMaxChoices
	}
	if c.MaxRecord == 0 {
		c.MaxRecord = DefaultMaxRecord
	}
	if c.Strategy == nil {
		c.Strategy = RandomWalk()
	}
	return c, nil
}

package protocol

import "time"

// Options are the settings of a run that a shrinker or a harness gives it
// (through ConfigOf) and a workload author never does: recording the
// world's choices, and replaying an edited copy of them.
type Options struct {
	// RecordChoices keeps the world's choices in the Result (Recorded):
	// every draw from Sim.Rand and every Keep answer, for a shrinker to
	// edit. At most MaxChoices are kept (0: DefaultMaxChoices).
	RecordChoices bool
	MaxChoices    int
	// ReplayChoices makes the world hand out Choices instead of the seed's
	// draws (the smallest value past the end) and answer Keep from Keeps
	// (false past the end of a kind's list). The schedule still comes from
	// the strategy.
	ReplayChoices bool
	Choices       []uint64
	Keeps         Keeps
}

// DefaultMaxChoices bounds a recorded choice list (Options.MaxChoices): a
// shrinker works on runs far shorter, and a long run's list is cut, not
// grown without limit (Recorded.ChoicesCut says so). It bounds the
// recorded Keep sites too.
const DefaultMaxChoices = 1 << 22

// Recorded is what a run reports of its Keep decisions and, when
// Options.RecordChoices, of its choices (through ResultOf).
type Recorded struct {
	// Kept and Dropped count the run's Keep decisions.
	Kept, Dropped Kept
	// Choices and KeepSites are the world's choices; ChoiceKeys says which
	// task made each draw and its ordinal among its draws (KeepKey);
	// ChoicesCut says the list hit MaxChoices.
	Choices    []uint64
	ChoiceKeys []KeepKey
	KeepSites  []KeepSite
	ChoicesCut bool
	// Horizon is how far the run got in each task's Keep calls (a control
	// run replays it with Keeps.Beyond).
	Horizon *Horizon
}

// DefaultHangAfter is sim.Config.HangAfter's default: far above any step a
// simulated task takes, short enough that a wedged run fails long before go
// test's own timeout.
const DefaultHangAfter = 10 * time.Second

// DefaultExploreMaxSteps bounds each schedule of sim.Explore when
// Config.MaxSteps is 0. It is far below a run's default because every step
// is a node of the search tree, kept in memory. Also, the non-preemptive
// default continuation turns a spin loop (a task polling with Yield for
// another task's progress) into a run that only the step limit ends, as a
// failure.
const DefaultExploreMaxSteps = 100_000

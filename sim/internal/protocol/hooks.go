package protocol

import (
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

// The hooks into sim's runs, set by package sim's init. This package
// cannot import sim (sim imports it), so a *sim.Sim, *sim.Config or
// *sim.Result goes in as an any; a wrong type panics at once.
var (
	// ConfigOf is the protocol part of a *sim.Config, to set.
	ConfigOf func(cfg any) *Options
	// ResultOf is the protocol part of a *sim.Result.
	ResultOf func(res any) *Recorded
	// TraceTail is a *sim.Result's last trace events, formatted, and their
	// header's words (the failure report's tail, for a passing run too).
	TraceTail func(res any) (lines []string, about string)
	// Guided is the sim.Strategy that follows decisions as far as they fit
	// the run and runs without preempting past them: a shrinker edits a
	// schedule with it (sim's strategy.go says how).
	Guided func(decisions []int32) any
	// Inside opens a scope of the *sim.Sim's current task: what it draws
	// and asks Keep until End is keyed by its current operation (sim's
	// choices.go says why). Worlds' components use it:
	//
	//	defer protocol.Inside(s).End()
	Inside func(s any) Scope
	// Steps is the *sim.Sim's scheduling steps so far; reading it makes
	// the step dependent with every other (see sim.Explore).
	Steps func(s any) int64
	// Interval records something of the world that began at from and ends
	// now on object (a database statement on its connection).
	Interval func(s any, from time.Time, object, format string, a ...any) record.EventID
	// Message records a message's fate: record.EventSend, EventReceive or
	// EventLost; msg is the message's number, which ties them together.
	Message func(s any, kind record.EventKind, msg int64, subscriber, format string, a ...any) record.EventID
)

// Scope is an open Inside scope.
type Scope struct{ depth *int }

// NewScope opens a scope on depth, the count of open scopes (sim's).
func NewScope(depth *int) Scope {
	*depth++
	return Scope{depth}
}

// End closes the scope.
func (sc Scope) End() {
	if *sc.depth <= 0 {
		panic("sim: Inside().End() called more often than Inside")
	}
	*sc.depth--
}

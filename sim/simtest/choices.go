package simtest

import (
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// A test of a world's shrinkability records a run's choices (its draws
// and Keep answers) and replays them with operations or faults dropped,
// as a shrinker does. The protocol behind it is internal to sim/; these
// are its handles for such tests.

// Keeps are the Keep answers a replay gives: which operations and faults
// it keeps, by ordinal or (KeyedKeepsOf) by the task that asks.
type Keeps = protocol.Keeps

// Choices is what a run recorded of its Keep decisions (Kept, Dropped)
// and, after RecordChoices, of its choices (Choices, KeepSites).
type Choices = protocol.Recorded

// ChoicesOf is what the run r recorded.
func ChoicesOf(r *sim.Result) *Choices { return protocol.ResultOf(r) }

// RecordChoices is cfg with its run recording its choices.
func RecordChoices(cfg sim.Config) sim.Config {
	protocol.ConfigOf(&cfg).RecordChoices = true
	return cfg
}

// ReplayChoices is cfg with its run replaying the choices rec recorded,
// with the Keep answers k.
func ReplayChoices(cfg sim.Config, rec sim.Result, k Keeps) sim.Config {
	o := protocol.ConfigOf(&cfg)
	o.ReplayChoices, o.Choices, o.Keeps = true, ChoicesOf(&rec).Choices, k
	return cfg
}

// KeepsOf is rec's Keep answers by ordinal: each kind's n-th call gets
// the n-th answer, whichever task asks.
func KeepsOf(rec sim.Result) Keeps { return protocol.KeepsOf(ChoicesOf(&rec).KeepSites) }

// KeyedKeepsOf is rec's Keep answers and draws keyed by the task that
// made them, as a shrinker replays them: dropping one task's operation
// moves no other task's draws or answers.
func KeyedKeepsOf(rec sim.Result) Keeps { return protocol.KeepsOfRun(ChoicesOf(&rec)) }

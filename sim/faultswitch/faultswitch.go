// Package faultswitch lets a test binary that carries a deliberate fault
// (a mutant of the audit's schema builds) run the same code without it.
//
// A shrinker needs that: a smaller run that still fails is a counterexample
// of the fault only if the code without the fault passes it. An edit can
// make a run fail on any code. A check that compares the run with a
// prediction made from the whole script fails once the edit drops one of
// its operations. A check that a bound is reached fails once the run is
// too short to reach it. Both fail the same way with the fault switched
// off, and that is how they are told apart from the fault's own failures.
//
// The package imports nothing, so the overlay that plants a fault in any
// package can register it here without an import cycle. Production files
// never import it.
package faultswitch

// switches are the registered faults' switches, in registration order.
// They are written only during package initialisation and read after it.
var switches []func(on bool)

// Register adds a fault's switch: set(false) turns the fault off, set(true)
// turns it on again. Call it from a package's init function.
func Register(set func(on bool)) {
	if set == nil {
		panic("faultswitch: Register(nil)")
	}
	switches = append(switches, set)
}

// Registered reports whether the binary carries a fault that can be
// switched off.
func Registered() bool { return len(switches) > 0 }

// Without runs f with every registered fault switched off and switches them
// back on afterwards, also when f panics. The caller makes sure that no
// other goroutine runs the faulty code meanwhile: a switch is a plain
// variable, set without synchronisation.
func Without(f func()) {
	for _, set := range switches {
		set(false)
	}
	defer func() {
		for _, set := range switches {
			set(true)
		}
	}()
	f()
}

//go:build race

package sim

// underRace scales the exhaustive tests down under the race detector, which
// makes every run about ten times slower; they check search logic, and the
// smaller runs still exercise every coroutine hand-off.
const underRace = true

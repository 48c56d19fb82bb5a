//go:build race

package timeline_test

// underRace: under the race detector, the tests that only run
// subprocesses or one goroutine skip (it has nothing to find in them and
// makes them several times slower); they run in full in make unit.
const underRace = true

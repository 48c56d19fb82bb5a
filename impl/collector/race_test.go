//go:build race

package collector

// underRace: the race detector makes the single-goroutine model tests
// (TestCollectorMatchesPlainPartition, TestSeriesAgainstFlatList) about
// ten times slower and has nothing to find in them; they run in make unit.
// The tests with real goroutines run under it in full.
const underRace = true

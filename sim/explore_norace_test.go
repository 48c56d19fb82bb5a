//go:build !race

package sim

// underRace: see explore_race_test.go.
const underRace = false

//go:build !race

package scenarios

// twRace reports whether the race detector is on (see tw_race_test.go).
const twRace = false

//go:build !race

package timeline_test

const underRace = false

//go:build !race

package simtest

const underRace = false

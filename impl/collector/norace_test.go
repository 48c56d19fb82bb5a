//go:build !race

package collector

const underRace = false

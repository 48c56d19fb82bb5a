// Package scanbad breaks the determinism contract on purpose: a go
// statement in code its simulation runs. TestScanFailsAForbiddenConstruct
// runs its test.
package scanbad

// Spawn starts a real goroutine, which the simulator cannot schedule.
func Spawn(f func()) { go f() }

package checks_test

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/checks"
)

// A revoked grant observed after the revoke committed: the read is exactly
// as stale as the time between the revoke and its invocation, and porcupine
// on the Δ-shifted history agrees on both sides of the bound.
func Example() {
	const s = int64(time.Second)

	// The database's commit log: access revoked at 1 s.
	truth := make(checks.Truth)
	_ = truth.Declare("user-1/channel-9", true)
	_ = truth.Commit("user-1/channel-9", 1*s, false)

	// What the clients saw, recorded from simulated tasks.
	rec := checks.NewRecorder(0)
	op := rec.Begin(0, 1, "check", "user-1/channel-9", nil, 1800*int64(time.Millisecond))
	_ = op.End(true, 2*s) // still granted
	history, _ := rec.History()
	reads, _ := history.Reads("check")

	rep, _ := checks.Staleness(reads, truth)
	fmt.Println("grant-staleness:", rep.Grant.MaxStaleness, "holds at 1s:", rep.Grant.Holds(time.Second))

	for _, d := range []time.Duration{500 * time.Millisecond, time.Second} {
		agree, _ := checks.CrossCheck(reads, truth, d)
		fmt.Printf("Δ=%v: holds=%t, checkers agree=%t\n", d, rep.Holds(d), agree)
	}
	// Output:
	// grant-staleness: 800ms holds at 1s: true
	// Δ=500ms: holds=false, checkers agree=true
	// Δ=1s: holds=true, checkers agree=true
}

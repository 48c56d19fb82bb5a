// Package broken is a claim phase fixture for the audit's runner: a
// package whose test binary does not build (a type error).
package broken

import "testing"

func TestBroken(t *testing.T) {
	var n int = "not a number"
	_ = n
}

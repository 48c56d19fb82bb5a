// Package build is a fixture that does not build.
package build

import "testing"

func TestNeverRuns(t *testing.T) { var n int = "not a number"; _ = n }

package lf

import (
	"flag"
	"os"
	"testing"
)

// TestMain keeps rapid from writing fail files into the tree unless asked
// to (-rapid.nofailfile=false): the audit's mutant runs make these checks
// fail on purpose, and a failing list is in the claim record's witness.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.nofailfile" })
	if _, env := os.LookupEnv("RAPID_NOFAILFILE"); !set && !env {
		_ = flag.Set("rapid.nofailfile", "true")
	}
	os.Exit(m.Run())
}

package lf

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain keeps rapid from writing fail files into the tree unless asked
// to (-rapid.nofailfile=false): the audit's mutant runs make these checks
// fail on purpose, and a failing list is in the claim record's witness.
//
// It also fixes rapid's seed unless -rapid.seed is given: rapid otherwise
// draws one from the clock, so LF-1..3's records (how many lists of each
// kind were generated) differed from one audit to the next, and two audits
// of one commit gave two audit.json files.
func TestMain(m *testing.M) {
	flag.Parse()
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if _, env := os.LookupEnv("RAPID_NOFAILFILE"); !given["rapid.nofailfile"] && !env {
		_ = flag.Set("rapid.nofailfile", "true")
	}
	if !given["rapid.seed"] {
		_ = flag.Set("rapid.seed", fmt.Sprint(rapidSeed))
	}
	os.Exit(m.Run())
}

// rapidSeed is rapid's seed when -rapid.seed is not given.
const rapidSeed = 0x5eed

// Without -rapid.seed, rapid runs from rapidSeed: the LF checks' records
// are the same in every run of a commit.
func TestRapidRunsFromAFixedSeed(t *testing.T) {
	f := flag.Lookup("rapid.seed")
	if f == nil {
		t.Fatal("rapid registers no -rapid.seed flag: TestMain cannot fix its seed")
	}
	given := false // on the command line (flag.Visit would also see TestMain's Set)
	for _, a := range os.Args[1:] {
		given = given || strings.HasPrefix(strings.TrimLeft(a, "-"), "rapid.seed")
	}
	if f.Value.String() != fmt.Sprint(rapidSeed) && !given {
		t.Errorf("rapid.seed = %s, want %d", f.Value, rapidSeed)
	}
}

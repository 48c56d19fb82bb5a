package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// The driver's flags: make bugbench (scenarios/cmd/bugbench) runs this test
// binary once per mutant and approach group, the mutant switched on by
// the schema build's variable (mutants.MutantEnv).
var (
	flagApproaches = flag.String("bugbench.approaches", "", "comma-separated approaches to run: random,pct,pos,surw,stress,synctest (empty: skip)")
	flagSeeds      = flag.Int("bugbench.seeds", 1000, "windtunnel's seed cap per strategy")
	flagWall       = flag.Duration("bugbench.wall", 60*time.Second, "wall-clock cap per approach")
	flagPCTDepth   = flag.Int("bugbench.pct.depth", DefaultPCTDepth, "PCT's bug depth")
)

// TestBugBenchDriver runs the approaches the flags name on the mutant the
// environment selects and prints one result line per approach.
func TestBugBenchDriver(t *testing.T) {
	if *flagApproaches == "" {
		t.Skip("run by make bugbench, with -bugbench.approaches")
	}
	id := os.Getenv(mutants.MutantEnv)
	tg, ok := bugbench.Lookup(id)
	if !ok || tg.Workload == nil {
		t.Fatalf("bugbench: %s=%q is not a benchmarked mutant", mutants.MutantEnv, id)
	}
	caps := Caps{Seeds: *flagSeeds, Wall: *flagWall, PCTDepth: *flagPCTDepth}
	// One untimed run first, in a simulation and on real goroutines, so
	// that the first approach timed does not pay for the process's warm-up.
	Windtunnel(tg.Workload, id, "random", Caps{Seeds: 1, Wall: time.Minute})
	_ = tg.Workload.Run(rt.Real())
	for _, ap := range strings.Split(*flagApproaches, ",") {
		var a Attempt
		switch ap {
		case "stress":
			a = Stress(tg.Workload, id, caps)
		case "synctest":
			a = Synctest(t, tg.Workload, id, caps)
		default:
			a = Windtunnel(tg.Workload, id, ap, caps)
		}
		js, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%s\n", ResultPrefix, js)
	}
}

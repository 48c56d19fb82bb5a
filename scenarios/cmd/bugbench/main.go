// Command bugbench runs the bug benchmark: every benchmarked mutant under
// windtunnel's strategies (random, pct, pos, surw), stress (rt.Real under
// -race, repeated) and testing/synctest (rt.Real in a bubble, repeated),
// and prints a Markdown table per mutant and the summary.
//
//	go run ./scenarios/cmd/bugbench -seeds 2000 -wall 60s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	seeds := flag.Int("seeds", 2000, "windtunnel's seed cap per strategy and mutant")
	wall := flag.Duration("wall", 60*time.Second, "wall-clock cap per approach and mutant")
	only := flag.String("mutants", "", "comma-separated mutant IDs (empty: every benchmarked one)")
	race := flag.Bool("race", true, "build the stress binary with the race detector")
	out := flag.String("out", "", "also write the Markdown report to this file")
	depth := flag.Int("pct-depth", DefaultPCTDepth, "PCT's bug depth (depth-1 priority change points)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "bugbench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	var ids []string
	if *only != "" {
		ids = strings.Split(*only, ",")
	}
	rep, err := Bench(ctx, Options{Root: root, Dir: dir, Mutants: ids,
		Caps: Caps{Seeds: *seeds, Wall: *wall, PCTDepth: *depth}, Race: *race, Log: os.Stderr})
	if err != nil {
		fail(err)
	}
	md := rep.Markdown()
	fmt.Print(md)
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// Command audit runs every claim's check over a number of seeds and every
// mutant, prints the claims table, writes out/audit.json, out/AUDIT.md and
// out/charts/, and exits non-zero when a claim does not have its expected
// verdict, a claim is not checked, or a mutant survives or cannot be applied.
//
//	go run ./scenarios/cmd/audit -seeds 50 -mutant-seeds 50
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit"
)

func main() {
	seeds := flag.Int("seeds", 50, "seeds per scenario test")
	mutantSeeds := flag.Int("mutant-seeds", 50, "seed budget per mutant")
	out := flag.String("out", "out", "output directory")
	run := flag.String("run", "^Test", "-run pattern of the scenario tests")
	mutants := flag.Bool("mutants", true, "run the mutants")
	only := flag.String("only", "", "comma-separated mutant IDs to run (default: all)")
	parallel := flag.Int("j", 2, "mutants built and run at once")
	timeout := flag.Duration("timeout", 30*time.Minute, "limit per go test process")
	flag.Parse()
	if *seeds <= 0 || *mutantSeeds <= 0 || *parallel <= 0 || *timeout <= 0 {
		fmt.Fprintln(os.Stderr, "audit: -seeds, -mutant-seeds, -j and -timeout must be positive")
		os.Exit(2)
	}
	if err := mainErr(*seeds, *mutantSeeds, *out, *run, *mutants, *only, *parallel, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "audit:", err)
		os.Exit(1)
	}
}

func mainErr(seeds, mutantSeeds int, out, run string, withMutants bool, only string, parallel int, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cs, err := audit.Claims()
	if err != nil {
		return err
	}
	ms := audit.Mutants()
	if err := audit.Validate(ms, cs); err != nil {
		return err
	}
	if only != "" {
		want := strings.Split(only, ",")
		ms = slices.DeleteFunc(ms, func(m audit.Mutant) bool { return !slices.Contains(want, m.ID) })
		if len(ms) == 0 {
			return fmt.Errorf("-only %q matches no mutant", only)
		}
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	r := audit.Runner{Root: root, Out: out, Pkgs: []string{"./scenarios"}, Log: os.Stdout, Timeout: timeout}
	start := time.Now()
	fmt.Printf("audit: running the claim checks over %d seeds each\n", seeds)
	recs, err := r.RunClaims(ctx, run, seeds)
	if err != nil {
		return err
	}
	rep := &audit.Report{Commit: audit.Commit(root), Seeds: seeds, Claims: audit.Merge(cs, recs), Proofs: audit.Proofs(recs)}
	if withMutants {
		fmt.Printf("audit: running %d mutants (%d at a time, %d seeds each)\n", len(ms), parallel, mutantSeeds)
		rep.Mutants = r.RunMutants(ctx, ms, mutantSeeds, parallel)
	}
	audit.Judge(rep)
	fmt.Println()
	if err := audit.WriteTable(os.Stdout, rep); err != nil {
		return err
	}
	if err := audit.WriteFiles(out, rep); err != nil {
		return err
	}
	fmt.Printf("audit: wrote %s/audit.json and %s/AUDIT.md in %v\n", out, out, time.Since(start).Round(time.Second))
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%d problem(s)", len(rep.Problems))
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

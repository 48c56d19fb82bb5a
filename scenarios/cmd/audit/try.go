package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// kindAdHoc is the kind of a mutant audit try reads from a file: a change a
// reviewer thought of, not (yet) in the catalogue.
const kindAdHoc = "ad hoc"

// maxTryMutants bounds one try: a file is a reviewer's handful of changes,
// each a go test build and run.
const maxTryMutants = 500

// tryMain runs the changes a reviewer thinks of against the claim checks,
// without adding them to the catalogue: each mutant of the file is applied
// with an overlay of its own and its family's checks run over the seed
// budget, as the audit runs a catalogue mutant. It prints, mutant by
// mutant, the check that caught it and after how many seeds, or that it
// survived, and exits 1 when one survived or could not be run, 2 on a bad
// file or flag.
//
//	go run ./scenarios/cmd/audit try mutants.json
//
// The file is a JSON array of mutants, in the catalogue's terms:
//
//	[{"id": "oc-grant-member-only", "file": "impl/accesschannels/cache.go",
//	  "old": "contains(member, channel) || contains(open, channel)",
//	  "new": "contains(member, channel)", "pkg": "./scenarios/oc"}]
//
// "old" must occur exactly once in "file". "pkg" is the claim family whose
// checks run; "tests" (a -run pattern, default every check of the family),
// "claims" (default the family's claims) and "what" are optional.
func tryMain(args []string) int {
	fs := flag.NewFlagSet("audit try", flag.ContinueOnError)
	seeds := fs.Int("mutant-seeds", 30, "seed budget per mutant")
	parallel := fs.Int("j", 2, "mutants built and run at once")
	out := fs.String("out", "out/try", "output directory (each mutant's overlay and failure artifacts)")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit per mutant's go test process: a mutant whose checks hang is caught, as a hang, when it runs out")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *seeds <= 0 || *parallel <= 0 || *timeout <= 0:
		fmt.Fprintf(os.Stderr, "audit try: -mutant-seeds, -j and -timeout must be positive, got %d, %d and %v\n", *seeds, *parallel, *timeout)
		return 2
	case fs.NArg() != 1:
		fmt.Fprintln(os.Stderr, "audit try: name one file of mutants: audit try [-mutant-seeds N] [-j N] FILE.json")
		return 2
	}
	st, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit try:", err)
		return 1
	}
	ms, err := readTryFile(fs.Arg(0), st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit try:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	catalogue, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit try:", err)
		return 2
	}
	r := audit.Runner{Root: st.root, Out: absOut(st.root, *out), Pkgs: st.pkgs, Log: os.Stdout, Timeout: *timeout, MutantTimeout: *timeout, Catalogue: catalogue}
	fmt.Printf("audit try: %d mutant(s) from %s, %d seeds each, %d at a time\n", len(ms), fs.Arg(0), *seeds, *parallel)
	start := time.Now()
	results := runTry(ctx, r, ms, *seeds, *parallel)
	survived, failed := 0, 0
	for _, res := range results {
		switch {
		case res.Error != "":
			failed++
		case !res.Caught:
			survived++
		}
	}
	fmt.Printf("audit try: %d caught, %d survived, %d could not be run (%v)\n", len(ms)-survived-failed, survived, failed, time.Since(start).Round(time.Second))
	if survived+failed > 0 {
		return 1
	}
	return 0
}

// readTryFile reads and checks the mutants of a try file: every field
// known, every mutant complete (defaults filled in), every snippet
// applying exactly once, no ID the catalogue or the file already uses.
func readTryFile(path string, st setup) ([]mutants.Mutant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ms []mutants.Mutant
	if err := dec.Decode(&ms); err != nil {
		return nil, fmt.Errorf("%s: %w (want a JSON array of {id, file, old, new, pkg[, tests, claims, what, race]})", path, err)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%s: no mutant", path)
	}
	if len(ms) > maxTryMutants {
		return nil, fmt.Errorf("%s: %d mutants, more than %d: split the file", path, len(ms), maxTryMutants)
	}
	for i := range ms {
		m := &ms[i]
		if m.Kind != "" || m.Seeds != 0 {
			return nil, fmt.Errorf("%s: mutant %q: kind and seeds are the audit's, not the file's", path, m.ID)
		}
		if !slices.Contains(st.pkgs, m.Pkg) {
			return nil, fmt.Errorf("%s: mutant %q: pkg %q is not a claim family (one of %s)", path, m.ID, m.Pkg, strings.Join(st.pkgs, ", "))
		}
		m.Kind = kindAdHoc
		switch {
		case m.Tests == "" && m.Race: // a data race: the family's checks on real goroutines, under the detector
			m.Tests = mutants.RaceFreeTests
		case m.Tests == "":
			m.Tests = "^Test"
		}
		if len(m.Claims) == 0 {
			m.Claims = familyClaims(st.cs, m.Pkg)
		}
		if m.What == "" {
			m.What = "ad hoc: " + oneLine(m.New)
		}
		for _, c := range st.ms {
			if c.ID == m.ID {
				return nil, fmt.Errorf("%s: mutant %q: the catalogue already has that ID", path, m.ID)
			}
		}
		if m.File == "" {
			return nil, fmt.Errorf("%s: mutant %q: no file", path, m.ID)
		}
		// Applying into a scratch directory checks that old occurs once.
		dir, err := os.MkdirTemp("", "windtunnel-try-")
		if err != nil {
			return nil, err
		}
		_, err = m.Apply(st.root, dir)
		_ = os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := mutants.Validate(ms, st.cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// familyClaims are the claims of the family whose checks live in pkg
// ("./scenarios/oc": OC-1, OC-2, ...), or nil for no family.
func familyClaims(cs []claims.Claim, pkg string) []string {
	family, ok := strings.CutPrefix(pkg, "./scenarios/")
	if !ok || family == "" {
		return nil
	}
	var out []string
	for _, c := range cs {
		if strings.HasPrefix(c.ID, strings.ToUpper(family)+"-") {
			out = append(out, c.ID)
		}
	}
	return out
}

// runTry runs ms, parallel at a time, printing each result as it comes,
// and returns the results in the file's order.
func runTry(ctx context.Context, r audit.Runner, ms []mutants.Mutant, seeds, parallel int) []audit.MutantResult {
	results := make([]audit.MutantResult, len(ms))
	sem := make(chan struct{}, parallel)
	done := make(chan int)
	for i := range ms {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = r.RunMutant(ctx, ms[i], seeds)
			done <- i
		}()
	}
	for range ms {
		i := <-done
		fmt.Println("  " + tryLine(ms[i], results[i]))
	}
	return results
}

// tryLine is one mutant's result.
func tryLine(m mutants.Mutant, res audit.MutantResult) string {
	switch {
	case res.Error != "":
		return fmt.Sprintf("%-40s could not be run: %s", res.ID, res.Error)
	case res.Caught && res.Reproduce != "":
		return fmt.Sprintf("%-40s %s\n      reproduce: %s", res.ID, res.Catch(func(s string) string { return s }), res.Reproduce)
	case res.Caught:
		return fmt.Sprintf("%-40s %s", res.ID, res.Catch(func(s string) string { return s }))
	}
	return fmt.Sprintf("%-40s SURVIVED %s of the checks %s in %s (claims %s)", res.ID, res.Survival(), m.Tests, m.Pkg, strings.Join(res.Claims, ", "))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	if s == "" {
		return "(a deletion)"
	}
	return s
}

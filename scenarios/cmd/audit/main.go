// Command audit runs every claim's check over a number of seeds and every
// mutant, prints the claims table, writes out/audit.json, out/AUDIT.md and
// out/charts/, and exits non-zero when a claim does not have its expected
// verdict, a claim is not checked, a tight bound is not reached, a probe is
// not reached, a proof fails, or a mutant survives or cannot be applied.
//
//	go run ./scenarios/cmd/audit -seeds 50 -mutant-seeds 50
//
// A sweep can be split into shards, each run on its own machine, and merged:
//
//	go run ./scenarios/cmd/audit -seeds 200 -shard 0/4 -out out/shard0   # ... 1/4, 2/4, 3/4
//	go run ./scenarios/cmd/audit merge -out out out/shard0 out/shard1 out/shard2 out/shard3
//
// A shard runs its slice of every claim check's seeds and every n-th
// mutant; merge judges the union exactly as one unsharded run would, and
// refuses shards of different commits, claims or settings, or a missing or
// doubled slice. The test binaries can be built once for all the shards and
// the merge, which then build nothing:
//
//	go run ./scenarios/cmd/audit build -bin out/bin   # then: audit -bin out/bin ..., audit merge -bin out/bin ...
//
// Changes nobody put in the catalogue can be tried against the checks the
// same way, one overlay each, from a JSON file (see tryMain):
//
//	go run ./scenarios/cmd/audit try mutants.json
//
// One failing run, found by the audit, a try or any go test, is run again
// or shrunk on the code it flew, its mutant applied (see replayMain; make
// replay and make shrink call it):
//
//	go run ./scenarios/cmd/audit replay -file out/replay/TestX_seed=0x1/replay.txt
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
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "merge" {
		os.Exit(mergeMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "build" {
		os.Exit(buildMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "try" {
		os.Exit(tryMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "mutation" {
		os.Exit(mutationMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && (os.Args[1] == "replay" || os.Args[1] == "shrink") {
		os.Exit(replayMain(os.Args[2:], os.Args[1] == "shrink"))
	}
	seeds := seedsFlag(50)
	flag.Var(&seeds, "seeds", `seeds per claim check, or "default": each check's own count, as go test runs it`)
	mutantSeeds := flag.Int("mutant-seeds", 50, "seed budget per mutant")
	out := flag.String("out", "out", "output directory")
	run := flag.String("run", allChecks, "-run pattern of the claim checks (narrower: the claims outside it are not judged)")
	withMutants := flag.Bool("mutants", true, "run the mutants")
	only := flag.String("only", "", "comma-separated mutant IDs to run (default: all)")
	parallel := flag.Int("j", 2, "processes at once, shared by the claim packages' checks and the mutants, built and run (the timed checks, audit.TimedTests, run alone first)")
	timeout := flag.Duration("timeout", 30*time.Minute, "limit per go test process")
	mutantTimeout := flag.Duration("mutant-timeout", 5*time.Minute, "limit per mutant's test process: a mutant whose checks hang (a loop no step limit sees) is caught, as a hang, when it runs out (the slowest mutant of make sim takes seconds)")
	schemata := flag.Bool("schemata", true, "run the mutants that edit one function from one schema build per claim family (false: one build per mutant)")
	verify := flag.Bool("verify-schemata", false, "run every schematized mutant both on the schema build and on its own overlay, and fail on any difference (no claim checks)")
	shrinkTries := flag.Int("shrink", 200, "shrink each caught mutant's first failing seed with at most this many re-runs, for AUDIT.md's minimal counterexamples (0: do not shrink)")
	shrinkMore := flag.Int("shrink-more", 2000, "re-runs a mutant's shrink may add, running its passes once more, when -shrink ran out on a counterexample above the goal (10 operations, 3 preemptions); 0: none")
	shrinkWall := flag.Duration("shrink-wall", 40*time.Second, "wall time each mutant's shrink may take at most (a shrink it stops says so in AUDIT.md)")
	determinism := flag.Int("determinism", 0, "also run each claim check's first N regular seeds (and every corpus seed) twice, every proof's exploration too, and fail on any difference in the trace (0: off; the mutants never run twice)")
	bin := flag.String("bin", "", "run the test binaries `audit build -bin DIR` prebuilt in DIR (every claim family's and the schema builds) instead of building them into -out")
	shardFlag := flag.String("shard", "", "run only shard i/n of the sweep (its slice of every check's seeds, every n-th mutant) and write a partial result for audit merge")
	flag.Parse()
	for _, f := range []struct {
		name string
		bad  bool
		v    any
	}{{"-mutant-seeds", *mutantSeeds <= 0, *mutantSeeds}, {"-j", *parallel <= 0, *parallel}, {"-timeout", *timeout <= 0, *timeout}, {"-mutant-timeout", *mutantTimeout <= 0, *mutantTimeout}} {
		if f.bad {
			fmt.Fprintf(os.Stderr, "audit: %s must be positive, got %v\n", f.name, f.v)
			os.Exit(2)
		}
	}
	if *determinism < 0 {
		fmt.Fprintf(os.Stderr, "audit: -determinism must not be negative, got %d\n", *determinism)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "audit: unexpected arguments %q (flags only, or the merge subcommand; see -h)\n", flag.Args())
		os.Exit(2)
	}
	var shard *simtest.Shard
	if *shardFlag != "" {
		sh, err := simtest.ParseShard(*shardFlag)
		if err != nil {
			fmt.Fprintf(os.Stderr, "audit: -shard: %v\n", err)
			os.Exit(2)
		}
		shard = &sh
	}
	if *verify {
		if err := verifyMain(*mutantSeeds, *parallel, *timeout, *mutantTimeout, *out, *only); err != nil {
			fmt.Fprintln(os.Stderr, "audit:", err)
			os.Exit(1)
		}
		return
	}
	if *shrinkWall <= 0 {
		fmt.Fprintf(os.Stderr, "audit: -shrink-wall must be positive, got %v\n", *shrinkWall)
		os.Exit(2)
	}
	if *shrinkTries < 0 {
		fmt.Fprintf(os.Stderr, "audit: -shrink must not be negative, got %d\n", *shrinkTries)
		os.Exit(2)
	}
	if *shrinkMore < 0 {
		fmt.Fprintf(os.Stderr, "audit: -shrink-more must not be negative, got %d\n", *shrinkMore)
		os.Exit(2)
	}
	if err := mainErr(int(seeds), *mutantSeeds, *out, *run, *withMutants, *only, *parallel, *timeout, *mutantTimeout, shard, *schemata, *shrinkTries, *shrinkMore, *shrinkWall, *determinism, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "audit:", err)
		os.Exit(1)
	}
}

// selectMutants is ms, or with -only the mutants it names (an unknown ID
// is an error).
func selectMutants(ms []mutants.Mutant, only string) ([]mutants.Mutant, error) {
	if only == "" {
		return ms, nil
	}
	want := strings.Split(only, ",")
	for _, id := range want {
		if !slices.ContainsFunc(ms, func(m mutants.Mutant) bool { return m.ID == id }) {
			return nil, fmt.Errorf("-only: no mutant %q (go test ./scenarios/mutants -run TestEveryMutantAppliesExactlyOnce -v lists them)", id)
		}
	}
	return slices.DeleteFunc(slices.Clone(ms), func(m mutants.Mutant) bool { return !slices.Contains(want, m.ID) }), nil
}

// verifyMain compares the schema build with one build per mutant (those
// -only names, or all).
func verifyMain(seeds, parallel int, timeout, mutantTimeout time.Duration, out, only string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := load()
	if err != nil {
		return err
	}
	ms, err := selectMutants(st.ms, only)
	if err != nil {
		return err
	}
	r := audit.Runner{Root: st.root, Out: absOut(st.root, out), Pkgs: st.pkgs, Log: os.Stdout, Timeout: timeout, MutantTimeout: mutantTimeout}
	start := time.Now()
	problems := r.VerifySchemata(ctx, ms, seeds, parallel)
	for _, p := range problems {
		fmt.Println("  - " + p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d mutant(s) behave differently on the schema build", len(problems))
	}
	fmt.Printf("audit: every schematized mutant behaves on the schema build exactly as on its own overlay (%v)\n", time.Since(start).Round(time.Second))
	return nil
}

// setup is what both the audit and the merge need.
type setup struct {
	root string
	cs   []claims.Claim
	ms   []mutants.Mutant
	pkgs []string
}

func load() (setup, error) {
	var st setup
	var err error
	if st.root, err = moduleRoot(); err != nil {
		return st, err
	}
	if st.cs, err = claims.Claims(); err != nil {
		return st, err
	}
	if st.ms, err = mutants.Everything(st.root); err != nil {
		return st, err
	}
	if err := mutants.Validate(st.ms, st.cs); err != nil {
		return st, err
	}
	for _, p := range audit.Families {
		if _, err := os.Stat(filepath.Join(st.root, p)); err == nil {
			st.pkgs = append(st.pkgs, p)
		}
	}
	return st, nil
}

func absOut(root, out string) string {
	if !filepath.IsAbs(out) {
		return filepath.Join(root, out)
	}
	return out
}

func mainErr(seeds, mutantSeeds int, out, run string, withMutants bool, only string, parallel int, timeout, mutantTimeout time.Duration, shard *simtest.Shard, schemata bool, shrinkTries, shrinkMore int, shrinkWall time.Duration, determinism int, bin string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := load()
	if err != nil {
		return err
	}
	ms, err := selectMutants(st.ms, only)
	if err != nil {
		return err
	}
	out = absOut(st.root, out)
	r := audit.Runner{Root: st.root, Out: out, Pkgs: st.pkgs, Log: os.Stdout, Timeout: timeout, MutantTimeout: mutantTimeout, ShrinkAttempts: shrinkTries, ShrinkMore: shrinkMore, ShrinkWall: shrinkWall, ClaimProcs: parallel}
	if bin != "" {
		r.Bin = absOut(st.root, bin)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	if shard != nil {
		samples := filepath.Join(out, "shard-samples")
		if err := os.RemoveAll(samples); err != nil {
			return err
		}
		r.Env = map[string]string{"WINDTUNNEL_SIM_SHARD": shard.String(), "WINDTUNNEL_SHARD_OUT": samples}
		var mine []mutants.Mutant
		for i, m := range ms {
			if audit.ShardMutant(i, *shard) {
				mine = append(mine, m)
			}
		}
		ms = mine
	}
	r.CheckDeterminism(determinism)
	start := time.Now()
	var mp *audit.MutantPhase
	if withMutants {
		mp = &audit.MutantPhase{Mutants: ms, Seeds: mutantSeeds, Schemata: schemata}
	}
	fmt.Printf("audit: running the claim checks over %s each%s%s%s, %d processes at a time; the timed checks alone first\n",
		seedsText(seeds), shardNote(shard), determinismNote(determinism), mutantsNote(mp), parallel)
	recs, failed, results, err := r.RunAudit(ctx, run, seeds, mp)
	if err != nil {
		return err
	}
	rep := &audit.Report{Commit: audit.Commit(st.root), Seeds: seeds, Claims: audit.Merge(st.cs, recs), Proofs: audit.Proofs(recs), Probes: audit.ProbesOf(recs), FailedTests: failed,
		Mutants: results}
	if shard != nil {
		meta := audit.ShardMeta{Commit: rep.Commit, ClaimsHash: audit.ClaimsHash(), Shard: shard.String(), Run: run, Seeds: seeds,
			MutantSeeds: mutantSeeds, Mutants: rep.Mutants, MutantIDs: ids}
		if !withMutants {
			meta.MutantIDs = nil
		}
		if err := audit.WriteShardMeta(out, meta); err != nil {
			return err
		}
		fmt.Printf("audit: shard %s written to %s in %v; combine the shards with: go run ./scenarios/cmd/audit merge -out DIR SHARD_DIRS...\n", shard, out, time.Since(start).Round(time.Second))
		return nil
	}
	return finish(out, rep, start, run)
}

// mutantsNote says which mutants run beside the claim checks.
func mutantsNote(mp *audit.MutantPhase) string {
	if mp == nil {
		return ""
	}
	return fmt.Sprintf(", and %d mutants over %d seeds each beside them", len(mp.Mutants), mp.Seeds)
}

// determinismNote says what -determinism adds to the claim phase.
func determinismNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", the first %d of each and every proof twice (a difference in the trace fails the check)", n)
}

// seedsFlag is -seeds: a positive count, or "default" (0): no count is
// set, and every check runs its own default number of seeds, exactly the
// run go test makes (make test's audit-quick, which then stands for the
// seeded family tests at their default counts).
type seedsFlag int

func (f *seedsFlag) String() string {
	if *f == 0 {
		return "default"
	}
	return fmt.Sprint(int(*f))
}

func (f *seedsFlag) Set(v string) error {
	if v == "default" {
		*f = 0
		return nil
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 || fmt.Sprint(n) != v {
		return fmt.Errorf(`want a positive number of seeds or "default", got %q`, v)
	}
	*f = seedsFlag(n)
	return nil
}

// seedsText says how many seeds the claim checks ran.
func seedsText(seeds int) string {
	if seeds == 0 {
		return "their default seed counts"
	}
	return fmt.Sprintf("%d seeds", seeds)
}

func shardNote(shard *simtest.Shard) string {
	if shard == nil {
		return ""
	}
	return fmt.Sprintf(" (shard %s)", shard)
}

// allChecks is the -run pattern that selects every claim check.
const allChecks = "^Test"

func finish(out string, rep *audit.Report, start time.Time, run string) error {
	if run != allChecks {
		// A narrowed audit judges the claims it ran: the others were not
		// asked for, which is not the same as nobody checking them.
		n := len(rep.Claims)
		rep.Claims = slices.DeleteFunc(rep.Claims, func(c audit.ClaimResult) bool { return c.Verdict == findings.NotChecked })
		if skipped := n - len(rep.Claims); skipped > 0 {
			fmt.Printf("audit: -run %s left %d of %d claims unchecked; they are not judged\n", run, skipped, n)
		}
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

// mergeMain combines shards into one audit.
func mergeMain(args []string) int {
	fs := flag.NewFlagSet("audit merge", flag.ContinueOnError)
	out := fs.String("out", "out", "output directory of the merged audit")
	timeout := fs.Duration("timeout", 30*time.Minute, "limit per go test process")
	bin := fs.String("bin", "", "run the claim test binaries `audit build -bin DIR` prebuilt in DIR instead of building them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "audit merge: name the shard directories: audit merge -out DIR SHARD_DIR...")
		return 2
	}
	if err := merge(*out, fs.Args(), *timeout, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "audit merge:", err)
		return 1
	}
	return 0
}

func merge(out string, dirs []string, timeout time.Duration, bin string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := load()
	if err != nil {
		return err
	}
	for i, d := range dirs {
		dirs[i] = absOut(st.root, d)
	}
	metas, muts, err := audit.ReadShards(dirs)
	if err != nil {
		return err
	}
	if here := audit.Commit(st.root); metas[0].Commit != here {
		return fmt.Errorf("the shards are from commit %s, this checkout is %s: merge on the commit that ran them", metas[0].Commit, here)
	}
	if metas[0].ClaimsHash != audit.ClaimsHash() {
		return fmt.Errorf("the shards judged another CLAIMS.md than this checkout's")
	}
	var samples []string
	for _, d := range dirs {
		samples = append(samples, filepath.Join(d, "shard-samples"))
	}
	out = absOut(st.root, out)
	start := time.Now()
	r := audit.Runner{Root: st.root, Out: out, Pkgs: st.pkgs, Log: os.Stdout, Timeout: timeout,
		Env: map[string]string{"WINDTUNNEL_SHARD_MERGE": strings.Join(samples, ",")}}
	if bin != "" {
		r.Bin = absOut(st.root, bin)
	}
	fmt.Printf("audit merge: judging %d shards of %s per claim check\n", len(dirs), seedsText(metas[0].Seeds))
	recs, failed, err := r.RunClaims(ctx, metas[0].Run, metas[0].Seeds)
	if err != nil {
		return err
	}
	rep := &audit.Report{Commit: metas[0].Commit, Seeds: metas[0].Seeds, Claims: audit.Merge(st.cs, recs), Proofs: audit.Proofs(recs),
		Probes: audit.ProbesOf(recs), Mutants: muts, FailedTests: failed}
	return finish(out, rep, start, metas[0].Run)
}

// buildMain builds what runs with -bin DIR: every claim family's test
// binary and the schema builds of the mutants (those -only names, or all),
// so that a sweep's shards and its merge build nothing.
func buildMain(args []string) int {
	fs := flag.NewFlagSet("audit build", flag.ContinueOnError)
	bin := fs.String("bin", "", "directory to build into (required)")
	only := fs.String("only", "", "comma-separated mutant IDs whose schema builds to make (default: all)")
	withMutants := fs.Bool("mutants", true, "build the mutants' schema builds too")
	parallel := fs.Int("j", 2, "builds at once")
	timeout := fs.Duration("timeout", 30*time.Minute, "limit per build")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *bin == "":
		fmt.Fprintln(os.Stderr, "audit build: -bin DIR is required: audit build -bin DIR [-only IDS] [-mutants=false]")
		return 2
	case *parallel <= 0 || *timeout <= 0:
		fmt.Fprintf(os.Stderr, "audit build: -j and -timeout must be positive, got %d and %v\n", *parallel, *timeout)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(os.Stderr, "audit build: unexpected arguments %q\n", fs.Args())
		return 2
	}
	st, err := load()
	if err == nil {
		var ms []mutants.Mutant
		if *withMutants {
			ms, err = selectMutants(st.ms, *only)
		}
		if err == nil {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			r := audit.Runner{Root: st.root, Bin: absOut(st.root, *bin), Pkgs: st.pkgs, Log: os.Stdout, Timeout: *timeout}
			err = r.Build(ctx, ms, *parallel)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit build:", err)
		return 1
	}
	return 0
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

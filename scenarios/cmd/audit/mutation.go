package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
)

// mutationMain generates mechanical mutants of impl/'s claimed packages,
// runs each against its families' claim checks on the schema builds, and
// prints the efficacy, caught / (caught + survived), per package and
// operator. Mutants argued equivalent (mechanical.Equivalents) are left
// out of it; every other survivor is a gap, listed with its change. It
// exits 1 when a survivor is not argued equivalent, 2 on bad flags.
//
//	audit mutation [-sample N] [-targets impl/timerwheel,...] [-ops compare,...] [-mutant-seeds N] [-hang D] [-rerun old/mutation.json]
func mutationMain(args []string) int {
	fs := flag.NewFlagSet("audit mutation", flag.ContinueOnError)
	seeds := fs.Int("mutant-seeds", 20, "seed budget per mutant")
	sample := fs.Int("sample", 0, "at most this many mutants per package, spread over it (0: all)")
	targets := fs.String("targets", "", "comma-separated package directories (default: every claimed package)")
	ops := fs.String("ops", "", "comma-separated operators (default: all: "+strings.Join(mechanical.Ops, ",")+")")
	parallel := fs.Int("j", 2, "processes at once")
	out := fs.String("out", "out/mutation", "output directory: mutation.json, MUTATION.md, each mutant's output")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit per mutant's test process: a hang is a catch")
	hang := fs.Duration("hang", 3*time.Second, "a mutant's step that runs this long without a scheduling point is a hang, a catch (six times as long while it computes)")
	everyCheck := fs.Bool("every-check", false, "run every check of a mutant's families, not only those whose coverage reaches its line")
	rerun := fs.String("rerun", "", "an earlier run's mutation.json: run only the mutants it left as gaps or could not run (its directory must not be -out)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "audit mutation: "+format+"\n", a...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected arguments %q", fs.Args())
	case *seeds <= 0 || *parallel <= 0 || *timeout <= 0 || *hang <= 0 || *sample < 0:
		return fail("-mutant-seeds, -j, -timeout and -hang must be positive and -sample not negative")
	}
	var again rerunSet
	if *rerun != "" {
		set, err := readRerun(*rerun)
		if err != nil {
			return fail("%v", err)
		}
		again = set
		if len(again.keys) == 0 {
			fmt.Printf("audit mutation: %s left no gap and no mutant unrun: nothing to run again\n", *rerun)
			return 0
		}
		if *targets == "" {
			*targets = rerunTargets(again)
		}
	}
	chosen, err := chooseTargets(*targets)
	if err != nil {
		return fail("%v", err)
	}
	opSet, err := chooseOps(*ops)
	if err != nil {
		return fail("%v", err)
	}
	st, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit mutation:", err)
		return 1
	}
	if *rerun != "" {
		if err := guardRerunOut(*rerun, absOut(st.root, *out)); err != nil {
			return fail("%v", err)
		}
	}
	equivalent, err := mechanical.Equivalents()
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit mutation:", err)
		return 1
	}
	start := time.Now()
	var all []mechanical.Mutant
	missing := maps.Clone(again.keys) // the earlier run's gaps not generated any more
	for _, t := range chosen {
		g, err := mechanical.Generate(st.root, t)
		if err != nil {
			fmt.Fprintln(os.Stderr, "audit mutation:", err)
			return 1
		}
		ms := slices.DeleteFunc(g.Mutants, func(m mechanical.Mutant) bool { return !opSet[m.Op] })
		if *rerun != "" {
			ms = keepRerun(ms, again, missing)
		}
		ms = spread(ms, *sample)
		fmt.Printf("audit mutation: %s: %d mutants generated, %d taken; %d mutations did not type-check\n", t.Dir, len(g.Mutants), len(ms), total(g.Uncompiled))
		all = append(all, ms...)
	}
	if len(missing) > 0 {
		keys := slices.Sorted(maps.Keys(missing))
		fmt.Printf("audit mutation: %d mutants of %s are not generated from this code any more (it changed where they were): %s\n", len(keys), *rerun, strings.Join(keys, " "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir := absOut(st.root, *out)
	unreached := map[string]bool{} // variant IDs no check reaches
	if !*everyCheck {
		reach, err := measureReach(ctx, st.root, dir, chosen, *seeds, *timeout, *parallel)
		if err != nil {
			fmt.Fprintln(os.Stderr, "audit mutation:", err)
			return 1
		}
		all = selectChecks(all, reach, unreached)
	}
	var variants []mutants.Mutant
	for _, m := range all {
		for _, v := range m.Variants {
			if unreached[v.ID] {
				continue
			}
			v.Claims = familyClaims(st.cs, v.Pkg)
			variants = append(variants, v)
		}
	}
	r := audit.Runner{Root: st.root, Out: dir, Pkgs: st.pkgs, Log: os.Stdout, Timeout: *timeout, MutantTimeout: *timeout, Hang: *hang}
	fmt.Printf("audit mutation: running %d mutants (%d runs over their families), %d seeds each, %d at a time\n", len(all), len(variants), *seeds, *parallel)
	results := r.RunMutants(ctx, variants, *seeds, *parallel, true)
	rep := judgeMutation(all, results, equivalent, unreached)
	if err := writeMutation(dir, rep); err != nil {
		fmt.Fprintln(os.Stderr, "audit mutation:", err)
		return 1
	}
	printMutation(os.Stdout, rep)
	if ctx.Err() != nil {
		fmt.Printf("audit mutation: interrupted: the %d mutants that could not be run have no verdict; the report holds the others\n", rep.Total.Errors)
	}
	fmt.Printf("audit mutation: wrote %s/MUTATION.md and mutation.json in %v\n", dir, time.Since(start).Round(time.Second))
	if rep.Total.Survived > 0 || rep.Total.Errors > 0 {
		return 1
	}
	return 0
}

func chooseTargets(list string) ([]mechanical.Target, error) {
	if list == "" {
		return mechanical.Targets, nil
	}
	var out []mechanical.Target
	for _, d := range strings.Split(list, ",") {
		i := slices.IndexFunc(mechanical.Targets, func(t mechanical.Target) bool { return t.Dir == strings.TrimPrefix(d, "./") })
		if i < 0 {
			return nil, fmt.Errorf("-targets: %q is not a claimed package (one of %s)", d, targetDirs())
		}
		out = append(out, mechanical.Targets[i])
	}
	return out, nil
}

func targetDirs() string {
	var ds []string
	for _, t := range mechanical.Targets {
		ds = append(ds, t.Dir)
	}
	return strings.Join(ds, ", ")
}

func chooseOps(list string) (map[string]bool, error) {
	set := map[string]bool{}
	if list == "" {
		for _, op := range mechanical.Ops {
			set[op] = true
		}
		return set, nil
	}
	for _, op := range strings.Split(list, ",") {
		if !slices.Contains(mechanical.Ops, op) {
			return nil, fmt.Errorf("-ops: unknown operator %q (one of %s)", op, strings.Join(mechanical.Ops, ", "))
		}
		set[op] = true
	}
	return set, nil
}

// spread keeps at most n of ms, evenly spaced, so a sample covers the
// whole package (0: all).
func spread(ms []mechanical.Mutant, n int) []mechanical.Mutant {
	if n == 0 || len(ms) <= n {
		return ms
	}
	out := make([]mechanical.Mutant, 0, n)
	for i := range n {
		out = append(out, ms[i*len(ms)/n])
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m { //windtunnel:unordered a sum
		n += v
	}
	return n
}

// mutationResult is one mechanical mutant's outcome over its families.
type mutationResult struct {
	Key        string `json:"key"`
	Package    string `json:"package"`
	Op         string `json:"op"`
	What       string `json:"what"`
	ID         string `json:"id"` // the first family's variant: make replay MUTANT=ID
	Caught     bool   `json:"caught"`
	CaughtBy   string `json:"caught_by,omitempty"`
	Seeds      int    `json:"seeds_to_catch,omitempty"`
	Equivalent string `json:"equivalent,omitempty"` // the argument, for a survivor argued equivalent
	Unreached  bool   `json:"unreached,omitempty"`  // no check's runs execute its line: it survived without a run
	Error      string `json:"error,omitempty"`
}

// cell counts one package × operator of the efficacy table. OwnChoice
// counts the survivors argued as impl's own choice (mechanical.OwnChoice),
// apart from the equivalent ones; efficacy leaves both out.
type cell struct{ Caught, Survived, Equivalent, OwnChoice, Errors int }

func (c cell) efficacy() string {
	if c.Caught+c.Survived == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(c.Caught)/float64(c.Caught+c.Survived))
}

type mutationReport struct {
	Date    string                     `json:"date"`
	Results []mutationResult           `json:"results"`
	Cells   map[string]map[string]cell `json:"cells"` // package -> operator -> counts
	Total   cell                       `json:"total"` // Total.Survived are the gaps
	Median  int                        `json:"median_seeds_to_catch"`
}

// judgeMutation folds the variants' results into one per mutant: caught
// when any family caught it.
//
// A mutant whose every variant is unreached (no check of its families
// executes its line) survived without a run.
func judgeMutation(all []mechanical.Mutant, results []audit.MutantResult, equivalent map[string]string, unreached map[string]bool) mutationReport {
	byID := map[string]audit.MutantResult{}
	for _, r := range results {
		byID[r.ID] = r
	}
	rep := mutationReport{Date: time.Now().UTC().Format("2006-01-02"), Cells: map[string]map[string]cell{}}
	var seeds []int
	for _, m := range all {
		res := mutationResult{Key: m.Key, Package: m.Target.Dir, Op: m.Op, What: m.Variants[0].What, ID: m.Variants[0].ID, Unreached: true}
		for _, v := range m.Variants {
			res.Unreached = res.Unreached && unreached[v.ID]
			r := byID[v.ID]
			switch {
			case r.Error != "" && res.Error == "":
				res.Error = r.Error
			case r.Caught && !res.Caught:
				res.Caught, res.CaughtBy, res.Seeds = true, r.CaughtBy, r.SeedsToCatch
			}
		}
		if res.Caught {
			res.Error = ""
		}
		if rep.Cells[m.Target.Dir] == nil {
			rep.Cells[m.Target.Dir] = map[string]cell{}
		}
		c := rep.Cells[m.Target.Dir][m.Op]
		switch {
		case res.Error != "":
			c.Errors++
			rep.Total.Errors++
		case res.Caught:
			c.Caught++
			rep.Total.Caught++
			seeds = append(seeds, res.Seeds)
		case mechanical.IsOwnChoice(equivalent[m.Key]):
			res.Equivalent = equivalent[m.Key]
			c.OwnChoice++
			rep.Total.OwnChoice++
		case equivalent[m.Key] != "":
			res.Equivalent = equivalent[m.Key]
			c.Equivalent++
			rep.Total.Equivalent++
		default:
			c.Survived++
			rep.Total.Survived++
		}
		rep.Cells[m.Target.Dir][m.Op] = c
		rep.Results = append(rep.Results, res)
	}
	if len(seeds) > 0 {
		slices.Sort(seeds)
		rep.Median = seeds[len(seeds)/2]
	}
	return rep
}

func printMutation(w io.Writer, rep mutationReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PACKAGE\t%s\tALL\n", strings.ToUpper(strings.Join(mechanical.Ops, "\t")))
	var dirs []string
	for d := range rep.Cells { //windtunnel:unordered sorted below
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		var row []string
		var all cell
		for _, op := range mechanical.Ops {
			c := rep.Cells[d][op]
			row = append(row, fmt.Sprintf("%s %d/%d", c.efficacy(), c.Caught, c.Caught+c.Survived))
			all.Caught, all.Survived = all.Caught+c.Caught, all.Survived+c.Survived
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %d/%d\n", d, strings.Join(row, "\t"), all.efficacy(), all.Caught, all.Caught+all.Survived)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "efficacy %s: %d caught, %d survived (gaps), %d argued equivalent, %d argued impl's own choice (no claim names it), %d could not be run; median seeds to catch %d\n",
		rep.Total.efficacy(), rep.Total.Caught, rep.Total.Survived, rep.Total.Equivalent, rep.Total.OwnChoice, rep.Total.Errors, rep.Median)
	for _, r := range rep.Results {
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "  ERROR     %s %s: %s\n", r.Key, r.What, r.Error)
		case !r.Caught && r.Equivalent == "" && r.Unreached:
			fmt.Fprintf(w, "  SURVIVED  %s %s (no check executes this line)\n", r.Key, r.What)
		case !r.Caught && r.Equivalent == "":
			fmt.Fprintf(w, "  SURVIVED  %s %s (make replay MUTANT=%s ...)\n", r.Key, r.What, r.ID)
		}
	}
}

func writeMutation(dir string, rep mutationReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "mutation.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Mechanical mutation, %s\n\n```\n", rep.Date)
	printMutation(&b, rep)
	b.WriteString("```\n")
	return os.WriteFile(filepath.Join(dir, "MUTATION.md"), []byte(b.String()), 0o644)
}

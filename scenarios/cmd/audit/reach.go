package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/audit"
	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
)

// Which checks can see a mutant. A simulated check is deterministic given
// its seeds: until a run first executes a mutated expression, the mutant's
// run is the original's, step for step. A check whose original runs over
// the mutant's seed budget never execute it cannot catch the mutant, and
// running it costs time for nothing. So make mutation measures once per
// family which coverage blocks each check executes (a coverage build, one
// process per check, twice), and each mutant runs only the checks that
// execute the block holding its first byte. The selection may only ever
// skip a check that provably cannot tell: a check that runs on the real
// runtime, whose two coverage runs differ, or that fails on the original
// code is run for every mutant, and so is every check for a position no
// block holds (a package-level declaration, a switch's case expression:
// coverage counts neither in a block).

// block is one coverage block of a check's runs: the source from line
// fromLine, column fromCol to line toLine, column toCol of file (relative
// to the module root), and whether the runs executed it.
type block struct {
	file              string
	fromLine, fromCol int
	toLine, toCol     int
	executed          bool
}

// holds reports whether the block's source holds the position, its end
// included: a block ends at the brace that opens the statement after it,
// and a mutant that starts there (a swapped branch) runs when it runs.
func (b block) holds(line, col int) bool {
	after := line > b.fromLine || line == b.fromLine && col >= b.fromCol
	before := line < b.toLine || line == b.toLine && col <= b.toCol
	return after && before
}

// familyReach is what the coverage runs of one family's checks found.
type familyReach struct {
	tests  []string           // every check, in the order the binary runs them
	always map[string]bool    // checks run for every mutant, with why in notes
	blocks map[string][]block // check -> its blocks
	notes  []string
}

// checksFor returns the checks of the family that can see a change that
// starts at line and col of file: those that executed a block holding the
// position, and the checks always run. all is true when no block holds it
// (a package-level declaration, or a switch's case expression, which
// coverage counts in no block): then every check runs.
func (fr familyReach) checksFor(file string, line, col int) (tests []string, all bool) {
	held := false
	for _, t := range fr.tests {
		hit := fr.always[t]
		for _, b := range fr.blocks[t] {
			if b.file == file && b.holds(line, col) {
				held = true
				hit = hit || b.executed
			}
		}
		if hit {
			tests = append(tests, t)
		}
	}
	if !held {
		return slices.Clone(fr.tests), true
	}
	return tests, false
}

// runPattern is the -test.run pattern of exactly tests.
func runPattern(tests []string) string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = strings.NewReplacer(".", `\.`, "(", `\(`, ")", `\)`).Replace(t)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// parseCoverage reads go tool covdata textfmt's output: a mode line, then
// "importpath/file.go:l1.c1,l2.c2 statements count" per block. Files
// outside module are left out; paths become relative to its root.
func parseCoverage(r io.Reader, module string) ([]block, error) {
	var bs []block
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 && strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || strings.LastIndexByte(fields[0], ':') < 0 {
			return nil, fmt.Errorf("coverage line %d: %q is not file:l1.c1,l2.c2 statements count", n, line)
		}
		colon := strings.LastIndexByte(fields[0], ':')
		file, span := fields[0][:colon], fields[0][colon+1:]
		var b block
		_, err := fmt.Sscanf(span, "%d.%d,%d.%d", &b.fromLine, &b.fromCol, &b.toLine, &b.toCol)
		count, err2 := strconv.Atoi(fields[2])
		if err != nil || err2 != nil || b.fromLine > b.toLine {
			return nil, fmt.Errorf("coverage line %d: %q is not file:l1.c1,l2.c2 statements count", n, line)
		}
		rel, inModule := strings.CutPrefix(file, module+"/")
		if !inModule {
			continue
		}
		b.file, b.executed = rel, count > 0
		bs = append(bs, b)
	}
	return bs, sc.Err()
}

// executedSet is the executed blocks of bs, for comparing two runs: counts
// may differ between runs of a deterministic check (none here do, but a
// loop bounded by wall time would), what ran may not.
func executedSet(bs []block) map[block]bool {
	set := map[block]bool{}
	for _, b := range bs {
		if b.executed {
			set[b] = true
		}
	}
	return set
}

// reachRun is one family's coverage measurement.
type reachRun struct {
	root, module, dir string
	pkg               string   // the family's test package, "./scenarios/oc"
	coverPkgs         []string // the claimed packages it flies, "./impl/relay"
	seeds             int
	timeout           time.Duration
	parallel          int
	log               io.Writer
}

// measure builds the family's tests with coverage of its claimed packages
// and runs each check twice over the seed budget, in a process of its own.
func (rr reachRun) measure(ctx context.Context) (familyReach, error) {
	fr := familyReach{always: map[string]bool{}, blocks: map[string][]block{}}
	bin := filepath.Join(rr.dir, "cover.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-cover", "-covermode=set",
		"-coverpkg="+strings.Join(rr.coverPkgs, ","), "-o", bin, rr.pkg)
	build.Dir = rr.root
	if out, err := build.CombinedOutput(); err != nil {
		return fr, fmt.Errorf("coverage build of %s: %v\n%s", rr.pkg, err, out)
	}
	list := exec.CommandContext(ctx, bin, "-test.list", "^Test")
	list.Dir = filepath.Join(rr.root, rr.pkg)
	out, err := list.Output()
	if err != nil {
		return fr, fmt.Errorf("listing the checks of %s: %v", rr.pkg, err)
	}
	fr.tests = strings.Fields(string(out))
	if len(fr.tests) == 0 {
		return fr, fmt.Errorf("%s has no checks", rr.pkg)
	}
	type outcome struct {
		runs [2][]block
		err  error
	}
	results := make([]outcome, len(fr.tests))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(rr.parallel, 1))
	for i, test := range fr.tests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for run := range 2 {
				bs, err := rr.cover(ctx, bin, test, run)
				if err != nil {
					results[i].err = err
					return
				}
				results[i].runs[run] = bs
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fr, err
	}
	for i, test := range fr.tests {
		res := results[i]
		fr.blocks[test] = res.runs[0]
		switch {
		case res.err != nil:
			fr.always[test] = true
			fr.notes = append(fr.notes, fmt.Sprintf("%s: always run: %v", test, res.err))
		case !maps.Equal(executedSet(res.runs[0]), executedSet(res.runs[1])):
			fr.always[test] = true
			fr.notes = append(fr.notes, fmt.Sprintf("%s: always run: two runs executed different lines", test))
		case slices.ContainsFunc(res.runs[0], realRuntime):
			// Two runs that agree say nothing of a third when real
			// goroutines or the wall clock decide what runs.
			fr.always[test] = true
			fr.notes = append(fr.notes, fmt.Sprintf("%s: always run: it runs on the real runtime (rt.Real)", test))
		}
	}
	return fr, nil
}

// realRuntime reports an executed block of the real runtime's seam, which
// only a check on real goroutines and the wall clock executes.
func realRuntime(b block) bool {
	return b.executed && strings.HasPrefix(b.file, realRuntimeDir+"/real")
}

// realRuntimeDir holds rt.Real; every coverage build covers it.
const realRuntimeDir = "impl/rt"

// cover runs one check once on the coverage build and returns its blocks.
// A check that fails on the original code is reported as an error: its
// coverage says nothing about what a mutant's run would execute.
func (rr reachRun) cover(ctx context.Context, bin, test string, run int) ([]block, error) {
	dir := filepath.Join(rr.dir, fmt.Sprintf("%s.%d", test, run))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "covdata"), 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, rr.timeout)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "-test.run", runPattern([]string{test}), "-test.count=1",
		"-test.timeout="+rr.timeout.String(), "-test.gocoverdir="+filepath.Join(dir, "covdata"))
	c.Dir = filepath.Join(rr.root, rr.pkg)
	c.Env = os.Environ()
	env := audit.SimEnv(rr.seeds, filepath.Join(dir, "claims.jsonl"), filepath.Join(dir, "stats.jsonl"), filepath.Join(dir, "artifacts"))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.Env = append(c.Env, k+"="+env[k])
	}
	if out, err := c.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("fails on the original code (%v): %s", err, lastLine(out))
	}
	text := filepath.Join(dir, "cover.txt")
	conv := exec.CommandContext(ctx, "go", "tool", "covdata", "textfmt", "-i="+filepath.Join(dir, "covdata"), "-o="+text)
	if out, err := conv.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go tool covdata: %v: %s", err, lastLine(out))
	}
	f, err := os.Open(text)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCoverage(f, rr.module)
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// measureReach measures the reach of every family that flies one of the
// chosen targets, over the coverage of those targets.
func measureReach(ctx context.Context, root, out string, chosen []mechanical.Target, seeds int, timeout time.Duration, parallel int) (map[string]familyReach, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	cover := map[string][]string{} // family -> the chosen targets it flies
	var families []string
	for _, t := range chosen {
		for _, f := range t.Families {
			if cover[f] == nil {
				families = append(families, f)
			}
			cover[f] = append(cover[f], "./"+t.Dir)
		}
	}
	reach := map[string]familyReach{}
	for _, f := range families {
		start := time.Now()
		dir := filepath.Join(out, "reach", strings.TrimPrefix(f, "./scenarios/"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		pkgs := append(slices.Clone(cover[f]), "./"+realRuntimeDir)
		rr := reachRun{root: root, module: module, dir: dir, pkg: f, coverPkgs: pkgs, seeds: seeds, timeout: timeout, parallel: parallel}
		fr, err := rr.measure(ctx)
		if err != nil {
			return nil, err
		}
		reach[f] = fr
		fmt.Printf("audit mutation: reach of %s: %d checks, %d run for every mutant, measured in %v\n",
			f, len(fr.tests), len(fr.always), time.Since(start).Round(time.Second))
		for _, n := range fr.notes {
			fmt.Printf("  %s\n", n)
		}
	}
	return reach, nil
}

// selectChecks narrows each variant's checks to those that reach its
// line, and marks in unreached the variants no check reaches.
func selectChecks(all []mechanical.Mutant, reach map[string]familyReach, unreached map[string]bool) []mechanical.Mutant {
	out := make([]mechanical.Mutant, len(all))
	for i, m := range all {
		m.Variants = slices.Clone(m.Variants)
		for j, v := range m.Variants {
			tests, _ := reach[v.Pkg].checksFor(v.File, m.Line, m.Col)
			if len(tests) == 0 {
				unreached[v.ID] = true
				continue
			}
			m.Variants[j].Tests = runPattern(tests)
		}
		out[i] = m
	}
	return out
}

// modulePath is the module line of root's go.mod.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod names no module", root)
}

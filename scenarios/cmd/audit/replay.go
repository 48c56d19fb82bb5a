package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// replayMain runs one failing run again (make replay), or shrinks it (make
// shrink), on the code it flew: the checkout's, or a mutant's, applied
// with an overlay of its own. The run is named by a replay file, which
// holds the test, package, seed, settings and mutant, or by a package,
// test and seed. It exits with go test's status for a replay; for a
// shrink, 0 when the run was shrunk and 1 when there was nothing to shrink
// or the shrink failed; 2 on bad arguments.
//
//	audit replay -file out/replay/TestX_seed=0x1/replay.txt
//	audit shrink -mutant oc-no-age-check -pkg ./scenarios/oc -test TestOC2_LostInvalidationAgeBound -seed 0x1
func replayMain(args []string, shrink bool) int {
	name := "audit " + verbOf(shrink)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	file := fs.String("file", "", "replay file a failure printed (it names everything else)")
	pkg := fs.String("pkg", "", "the test's package, relative to the module root (./scenarios/oc)")
	test := fs.String("test", "", "the test that ran the seed (TestX, or TestX/sub for a subtest)")
	seed := fs.String("seed", "", "the seed, hex (0x5eed) or decimal; empty runs every seed of the test")
	strategy := fs.String("strategy", "", "scheduling strategy of the run (random or pct; empty: go test's default)")
	mutant := fs.String("mutant", "", "the mutant the run flew, by ID")
	catalogue := fs.String("mutants", "", "the JSON file of -mutant, when it is not in the catalogue (make try-mutants' file)")
	extra := fs.String("args", "", "more go test flags, as a failure prints them (-sim.strategy=pct -sim.pct.steps=5120)")
	out := fs.String("out", "out", "output directory: the run's artifacts go under OUT/"+verbOf(shrink))
	attempts := fs.Int("attempts", 600, "with shrink: re-runs the shrink may make at most")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, name+": "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q: every input is a flag (-file, or -pkg, -test and -seed)", fs.Args())
	}
	if *attempts < 1 {
		return fail("-attempts must be at least 1, got %d", *attempts)
	}
	root, err := moduleRoot()
	if err != nil {
		return fail("%v", err)
	}
	target := replayTarget{pkg: *pkg, test: *test, mutant: *mutant, catalogue: *catalogue}
	if *file != "" {
		if err := target.fromFile(*file, *seed, *strategy); err != nil {
			return fail("%v", err)
		}
	} else if err := target.fromSeed(*seed, *strategy); err != nil {
		return fail("%v", err)
	}
	target.flags = append(target.flags, strings.Fields(*extra)...)
	if err := checkPackage(root, target.pkg); err != nil {
		return fail("%v", err)
	}
	outDir := absOut(root, *out)
	goArgs := []string{"test", "-count=1"}
	env := os.Environ()
	if target.mutant != "" {
		overlay, err := target.applyMutant(root, filepath.Join(outDir, "mutants"))
		if err != nil {
			return fail("%v", err)
		}
		goArgs = append(goArgs, "-overlay="+overlay)
		env = append(env, mutants.MutantEnv+"="+target.mutant)
		if target.catalogue != "" {
			env = append(env, simtest.MutantsEnv+"="+target.catalogue)
		}
	}
	goArgs = append(goArgs, target.pkg, "-run", target.run)
	goArgs = append(goArgs, target.flags...)
	artifacts := filepath.Join(outDir, verbOf(shrink))
	goArgs = append(goArgs, "-sim.out="+artifacts, "-sim.record=false", "-v")
	if !shrink && target.seeded {
		// The whole trace, pass or fail: what a person replays a run for.
		goArgs = append(goArgs, "-sim.trace="+filepath.Join(artifacts, target.traceName()))
	}
	if shrink {
		goArgs = append(goArgs, "-timeout", "60m", "-sim.shrink", fmt.Sprintf("-sim.shrink.attempts=%d", *attempts))
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return fail("%v", err)
	}
	goArgs = append(goArgs[:1], append([]string{"-json"}, goArgs[1:]...)...)
	fmt.Printf("%s: go %s\n", name, strings.Join(goArgs, " "))
	cmd := exec.Command("go", goArgs...)
	cmd.Dir, cmd.Env = root, env
	cmd.Stderr = os.Stdout
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail("%v", err)
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return fail("running go test: %v", err)
	}
	ran := relayEvents(stdout, os.Stdout)
	runErr := cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case runErr != nil && !errors.As(runErr, &exitErr):
		return fail("running go test: %v", runErr)
	case !ran && runErr == nil:
		return fail("no test in %s matches %s", target.pkg, target.run)
	case !shrink && runErr != nil:
		fmt.Printf("%s: the run failed, as recorded; its artifacts are under %s\n", name, artifacts)
		return 1
	case !shrink:
		fmt.Printf("%s: the run passed\n", name)
		return 0
	case runErr == nil:
		fmt.Printf("%s: the run passed: there is no failure to shrink\n", name)
		return 1
	case shrunkUnder(artifacts, started):
		fmt.Printf("%s: done (the shrunk run still fails, as it must); its files are under %s\n", name, artifacts)
		return 0
	}
	fmt.Printf("%s: the run failed but was not shrunk (see \"shrink     not done\" above)\n", name)
	return 1
}

// testEvent is the part of go test -json's events (cmd/test2json) a
// replay reads.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// maxEventLine bounds one line of go test -json's output.
const maxEventLine = 16 << 20

// relayEvents prints the output the events carry, as go test -v would,
// and reports whether a test ran. A line that is not an event (the go
// command's own) is printed as it is.
func relayEvents(r io.Reader, w io.Writer) (ran bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	for sc.Scan() {
		var ev testEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		ran = ran || (ev.Action == "run" && ev.Test != "")
		_, _ = io.WriteString(w, ev.Output)
	}
	_, _ = io.Copy(io.Discard, r) // a line past the bound: drain, so the process can end
	return ran
}

// shrunkUnder reports whether a shrink under dir left, since it started,
// a summary of a shrunk run that still fails (one from an earlier shrink
// into the same directory does not count).
func shrunkUnder(dir string, since time.Time) bool {
	found := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, filepath.FromSlash(simtest.ShrinkFile)) {
			return nil
		}
		if info, err := d.Info(); err != nil || info.ModTime().Before(since) {
			return nil
		}
		if sum, err := simtest.ReadShrinkSummary(path); err == nil && sum.ShrinkFail == "" {
			found = true
		}
		return nil
	})
	return found
}

func verbOf(shrink bool) string {
	if shrink {
		return "shrink"
	}
	return "replay"
}

// replayTarget is the run to fly again: where, which tests, with which
// flags, on which code.
type replayTarget struct {
	pkg, test, run    string
	flags             []string
	mutant, catalogue string
	seeded            bool   // the target is one seed
	seedName          string // the seed subtest's name, when seeded
}

// traceName is the file name of the replayed run's whole trace.
func (t *replayTarget) traceName() string {
	return strings.NewReplacer("/", "_", "=", "-").Replace(t.seedName) + ".trace"
}

// fromFile takes everything from a replay file; flags that name the same
// things must agree with it.
func (t *replayTarget) fromFile(path, seed, strategy string) error {
	if seed != "" || strategy != "" {
		return fmt.Errorf("-seed and -strategy come from the replay file %s: leave them out", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	rec, err := simtest.ReadRecorded(abs)
	if err != nil {
		return err
	}
	for _, f := range []struct{ flag, given, recorded string }{
		{"-pkg", t.pkg, rec.Package}, {"-test", t.test, rec.Test}, {"-mutant", t.mutant, rec.Mutant},
	} {
		if f.given != "" && f.recorded != "" && f.given != f.recorded {
			return fmt.Errorf("%s %s contradicts the replay file, which says %s (leave the flag out)", f.flag, f.given, f.recorded)
		}
	}
	if rec.Package != "" {
		t.pkg = rec.Package
	}
	if t.pkg == "" {
		return fmt.Errorf("%s is older than the files that name their package: give it with -pkg (PKG=)", path)
	}
	t.test, t.mutant = rec.Test, rec.Mutant
	if rec.Catalogue != "" {
		t.catalogue = rec.Catalogue
	}
	// The file's test alone: it runs only the file's seed, as a subtest
	// of its own or, for a proof's schedule, as the test itself.
	t.seedName, t.seeded = fmt.Sprintf("%s/seed=%#x", rec.Test, rec.Seed), true
	t.run = simtest.RunPattern(rec.Test)
	t.flags = []string{"-sim.replay=" + abs}
	return nil
}

// fromSeed names the run by package, test and seed.
func (t *replayTarget) fromSeed(seed, strategy string) error {
	if t.pkg == "" || t.test == "" {
		return fmt.Errorf("name the run: -file FILE (FILE=), or -pkg, -test and -seed (PKG=, TEST=, SEED=)")
	}
	if !strings.HasPrefix(t.test, "Test") || strings.ContainsAny(t.test, " \t") {
		return fmt.Errorf("-test %q is not a test name (TestX, or TestX/sub)", t.test)
	}
	name := t.test
	if seed != "" {
		v, err := simtest.ParseSeed(seed)
		if err != nil {
			return err
		}
		name += fmt.Sprintf("/seed=%#x", v)
		t.seedName, t.seeded = name, true
		t.flags = append(t.flags, fmt.Sprintf("-sim.seed=%#x", v))
	}
	if strategy != "" {
		t.flags = append(t.flags, "-sim.strategy="+strategy)
	}
	t.run = simtest.RunPattern(name)
	return nil
}

// applyMutant writes the mutant's overlay under dir and returns its path.
func (t *replayTarget) applyMutant(root, dir string) (string, error) {
	var all []mutants.Mutant
	var err error
	if t.catalogue != "" {
		if t.catalogue, err = filepath.Abs(t.catalogue); err != nil {
			return "", err
		}
		st, err := load()
		if err != nil {
			return "", err
		}
		all, err = readTryFile(t.catalogue, st)
		if err != nil {
			return "", err
		}
	} else if strings.HasPrefix(t.mutant, "mech-") {
		m, ok, err := mechanical.Find(root, t.mutant)
		if err != nil {
			return "", err
		}
		if ok {
			all = m.Variants
		}
	} else if all, err = mutants.Everything(root); err != nil {
		return "", err
	}
	i := slices.IndexFunc(all, func(m mutants.Mutant) bool { return m.ID == t.mutant })
	if i < 0 {
		where := "the catalogue"
		if t.catalogue != "" {
			where = t.catalogue
		}
		return "", fmt.Errorf("no mutant %q in %s (make try-mutants' own mutants need MUTANTS=FILE too)", t.mutant, where)
	}
	m := all[i]
	if m.Pkg != "" && t.pkg != "" && m.Pkg != t.pkg {
		return "", fmt.Errorf("mutant %s is checked in %s, not in %s", m.ID, m.Pkg, t.pkg)
	}
	return m.Apply(root, filepath.Join(dir, m.ID))
}

// checkPackage fails clearly on a package go cannot find, before a test
// run would say something less direct.
func checkPackage(root, pkg string) error {
	cmd := exec.Command("go", "list", pkg)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("no package %s in this module: %s", pkg, strings.TrimSpace(string(msg)))
	}
	return nil
}

package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// The audit runs compiled test binaries, each built once (go test -c), not
// go test. go test links a package's test binary again on every call. The
// claim phase calls it twice for the families with timed checks; each
// shard of a sweep calls it once more for every family and every schema
// build, and audit merge once more again. A sweep builds the binaries
// before its array starts (audit build -bin DIR), and every shard and the
// merge run them from DIR (-bin DIR). So the array's tasks compile and
// link nothing, whatever the shard count, and run the very binaries the
// unsharded audit would.

// testBinary is the path of pkg's test binary in dir: "./scenarios/dr" is
// dir/scenarios_dr.test.
func testBinary(dir, pkg string) string {
	return filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(pkg, "./"), "/", "_")+".test")
}

// schemaManifest is what a schema build left in its directory, for the
// runs that use it without building it (Runner.Bin).
type schemaManifest struct {
	In       []string          `json:"in"`       // the mutant IDs the schema serves
	Binaries map[string]string `json:"binaries"` // family package -> schema test binary, by name in the manifest's directory
}

const manifestName = "schema.json"

// stampName is the file in which Build records the commit it built, so
// that a run with -bin refuses binaries of another commit instead of
// judging the checkout by code it does not hold.
const stampName = "build.json"

type buildStamp struct {
	Commit string `json:"commit"` // Commit(root) at the build
}

// checkStamp refuses a -bin directory that Build did not write, or wrote
// on another commit than the checkout's.
func (r Runner) checkStamp() error {
	data, err := os.ReadFile(filepath.Join(r.Bin, stampName))
	var st buildStamp
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		return fmt.Errorf("-bin %s was not written by audit build (%v): build it with `audit build -bin %s`", r.Bin, err, r.Bin)
	}
	if here := Commit(r.Root); st.Commit != here {
		return fmt.Errorf("-bin %s holds the test binaries of commit %s, this checkout is %s: build them again with `audit build -bin %s`", r.Bin, st.Commit, here, r.Bin)
	}
	return nil
}

// buildTests builds pkgs' test binaries into dir (go test -c, with overlay
// unless ""), up to parallel at once. It returns the binaries by package
// and, for each package that did not build, go's output.
func (r Runner) buildTests(ctx context.Context, dir string, pkgs []string, overlay string, parallel int, flags ...string) (bins, failed map[string]string) {
	bins, failed = map[string]string{}, map[string]string{}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		for _, pkg := range pkgs {
			failed[pkg] = err.Error()
		}
		return bins, failed
	}
	if r.buildTogether(ctx, dir, pkgs, overlay, flags) {
		for _, pkg := range pkgs {
			bins[pkg] = testBinary(dir, pkg)
		}
		return bins, failed
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, max(parallel, 1))
	for _, pkg := range pkgs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			bin := testBinary(dir, pkg)
			args := append([]string{"test", "-c", "-o", bin}, flags...)
			if overlay != "" {
				args = append(args, "-overlay="+overlay)
			}
			var out bytes.Buffer
			cctx, cancel := context.WithTimeout(ctx, r.Timeout)
			defer cancel()
			cmd := exec.CommandContext(cctx, "go", append(args, pkg)...)
			cmd.Dir = r.Root
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[pkg] = strings.TrimSpace(out.String() + "\n" + err.Error())
				return
			}
			bins[pkg] = bin
		}()
	}
	wg.Wait()
	return bins, failed
}

// buildTogether builds pkgs' test binaries with one go command (go test
// -c -o DIR/ with every package) and moves each to its testBinary name. It
// reports whether every one was built; on false the caller builds them one
// package at a time, which names the packages that do not build.
//
// One command instead of one per package: the go command has fixed work
// per call even for a package whose linked test binary it already holds
// (loading the packages, hashing their files, copying the binary out of
// its cache). An audit would make 15 such calls: the claim binaries, the
// schema builds and the race schema builds, five families each.
func (r Runner) buildTogether(ctx context.Context, dir string, pkgs []string, overlay string, flags []string) bool {
	if len(pkgs) < 2 {
		return false
	}
	seen := map[string]bool{} // go names each binary by its package's last element
	for _, pkg := range pkgs {
		base := filepath.Base(pkg)
		if seen[base] || base == "." || base == "..." {
			return false
		}
		seen[base] = true
	}
	tmp, err := os.MkdirTemp(dir, "together-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"test", "-c", "-o", tmp + string(filepath.Separator)}, flags...)
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	cctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "go", append(args, pkgs...)...)
	cmd.Dir = r.Root
	if err := cmd.Run(); err != nil {
		return false
	}
	for _, pkg := range pkgs {
		if err := os.Rename(filepath.Join(tmp, filepath.Base(pkg)+".test"), testBinary(dir, pkg)); err != nil {
			return false
		}
	}
	return true
}

// familyBinaries are the claim phase's test binaries for pkgs: the
// prebuilt ones in r.Bin, else built now into r.Out/bin. A package whose
// binary did not build is in failed with go's output (its checks are then
// reported as not building, as go test would); a prebuilt directory that
// lacks one is an error.
func (r Runner) familyBinaries(ctx context.Context, pkgs []string) (bins, failed map[string]string, err error) {
	if r.Bin != "" {
		if err := r.checkStamp(); err != nil {
			return nil, nil, err
		}
		bins = map[string]string{}
		for _, pkg := range pkgs {
			bin := testBinary(r.Bin, pkg)
			if _, err := os.Stat(bin); err != nil {
				return nil, nil, fmt.Errorf("-bin %s has no test binary for %s (%v): build them with `audit build -bin %s` on this commit", r.Bin, pkg, err, r.Bin)
			}
			bins[pkg] = bin
		}
		return bins, map[string]string{}, nil
	}
	start := time.Now()
	bins, failed = r.buildTests(ctx, filepath.Join(r.Out, "bin"), pkgs, "", max(r.ClaimProcs, 1))
	fmt.Fprintf(r.Log, "  built %d claim test binaries (%d failed) in %v\n", len(bins), len(failed), time.Since(start).Round(100*time.Millisecond))
	return bins, failed, nil
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// importPath is pkg's import path ("./scenarios/dr" ->
// "github.com/windtunnel/windtunnel/scenarios/dr"), as go test names it in
// its result lines.
func (r Runner) importPath(pkg string) string {
	data, err := os.ReadFile(filepath.Join(r.Root, "go.mod"))
	m := moduleLine.FindSubmatch(data)
	if err != nil || m == nil {
		return pkg
	}
	return string(m[1]) + strings.TrimPrefix(pkg, ".")
}

// runTestBinary runs one claim part on its package's test binary as go
// test -json runs it (runBinary): out gets the events go test would write.
func (r Runner) runTestBinary(ctx context.Context, out io.Writer, env map[string]string, bin string, p claimPart) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	args := append([]string{"-test.count=1", "-test.timeout=" + r.Timeout.String()}, p.flags()...)
	return r.runBinary(ctx, out, p.pkg, withEnv(env), bin, args...)
}

// writeManifest records a schema build in dir for later runs (Runner.Bin).
func writeManifest(dir string, sc mutants.Schema, bins map[string]string) error {
	m := schemaManifest{Binaries: map[string]string{}}
	for pkg, bin := range bins { //windtunnel:unordered a map to a map
		m.Binaries[pkg] = filepath.Base(bin)
	}
	for id, in := range sc.In { //windtunnel:unordered sorted below
		if in {
			m.In = append(m.In, id)
		}
	}
	slices.Sort(m.In)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestName), append(data, '\n'), 0o644)
}

// prebuiltSchemata reads the schema build in r.Bin (audit build): the
// mutants of ms it serves and its binaries. Without one, every mutant gets
// a build of its own, as when a schema build fails.
func (r Runner) prebuiltSchemata(ms []mutants.Mutant) (map[string]bool, map[string]string) {
	path := filepath.Join(r.Bin, "_schema", manifestName)
	data, err := os.ReadFile(path)
	var m schemaManifest
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		fmt.Fprintf(r.Log, "  mutant schemata: no schema build in %s (%v); every mutant gets a build of its own\n", r.Bin, err)
		return nil, map[string]string{}
	}
	for pkg, name := range m.Binaries { //windtunnel:unordered a map to itself
		m.Binaries[pkg] = filepath.Join(r.Bin, "_schema", name)
	}
	in := map[string]bool{}
	n := 0
	for _, mu := range ms {
		if slices.Contains(m.In, mu.ID) {
			if _, ok := m.Binaries[mu.Pkg]; ok {
				in[mu.ID] = true
				n++
			}
		}
	}
	fmt.Fprintf(r.Log, "  mutant schemata: %d of %d mutants in the %d schema builds of %s; %d get builds of their own\n",
		n, len(ms), len(m.Binaries), r.Bin, len(ms)-n)
	return in, m.Binaries
}

// Build builds, into r.Bin, everything an audit with -bin runs: the claim
// families' test binaries and the schema builds of ms. It returns an error
// naming each one that did not build.
func (r Runner) Build(ctx context.Context, ms []mutants.Mutant, parallel int) error {
	if r.Bin == "" {
		return errors.New("no directory to build into (-bin)")
	}
	start := time.Now()
	bins, failed := r.buildTests(ctx, r.Bin, r.Pkgs, "", parallel)
	var problems []string
	for _, pkg := range r.Pkgs {
		if out, ok := failed[pkg]; ok {
			problems = append(problems, fmt.Sprintf("%s: %s", pkg, oneLine(out, 300)))
		}
	}
	fmt.Fprintf(r.Log, "audit build: %d claim test binaries in %s (%v)\n", len(bins), r.Bin, time.Since(start).Round(100*time.Millisecond))
	if len(ms) > 0 {
		// Into r.Bin/_schema, where a run with -bin reads it.
		in, schema := r.writeSchemata(ctx, filepath.Join(r.Bin, "_schema"), ms, parallel)
		if len(in) > 0 && len(schema) == 0 {
			problems = append(problems, "no schema build succeeded")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d build(s) failed: %s", len(problems), strings.Join(problems, "; "))
	}
	data, err := json.Marshal(buildStamp{Commit: Commit(r.Root)})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.Bin, stampName), append(data, '\n'), 0o644)
}

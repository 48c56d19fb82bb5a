package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The sweep of the test: a few claim checks (named whole, so that a claim
// row counts exactly testSeeds seeds when a family gains a check; two
// seeded checks with
// per-seed samples, one with probes, one proof) and one mutant, over seeds
// that do not divide evenly among the shards. None of these checks
// measures wall time, so the merged audit must equal the unsharded one
// byte for byte once the output directories are named alike.
const (
	testSeeds       = 4
	testShards      = 3
	testMutantSeeds = 10
	testRun         = `^(TestOC1_UnionMatchesUncached|TestOC5_|TestMS1_|TestMS3_ProofFence)`
	testMutant      = "oc-union-drops-open-half"
)

// TestSlurmSweepEqualsUnsharded runs a real sweep of three shards through
// sbatch (slurm/sweep.sh), then the same audit unsharded with the same
// binary, and compares their audit.json and AUDIT.md.
func TestSlurmSweepEqualsUnsharded(t *testing.T) {
	if os.Getenv("WINDTUNNEL_SLURM") != "1" {
		t.Skip("needs a Slurm cluster: `make sweep-slurm-test` starts a one-node one on loopback (scenarios/sweep/slurm/cluster.sh) and runs this test with WINDTUNNEL_SLURM=1")
	}
	for _, prog := range []string{"sbatch", "squeue", "scontrol", "scancel"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("WINDTUNNEL_SLURM=1 but %s is not on PATH: %v", prog, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The shards write where every node sees it: on the loopback cluster
	// any directory; on a real cluster, WINDTUNNEL_SLURM_DIR on a shared
	// file system.
	dir := t.TempDir()
	if shared := os.Getenv("WINDTUNNEL_SLURM_DIR"); shared != "" {
		if dir, err = os.MkdirTemp(shared, "sweep-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	merged := filepath.Join(dir, "merged")
	sweepDir := filepath.Join(dir, "sweep")
	full := filepath.Join(dir, "full")

	// 1. The sweep: build, sbatch --array=0-2, wait, merge.
	sweep := command(t, root, filepath.Join(root, "scenarios", "sweep", "slurm", "sweep.sh"))
	sweep.Env = append(os.Environ(),
		fmt.Sprintf("SEEDS=%d", testSeeds), fmt.Sprintf("SHARDS=%d", testShards),
		fmt.Sprintf("MUTANT_SEEDS=%d", testMutantSeeds), "RUN="+testRun, "MUTANTS=true", "ONLY="+testMutant,
		"OUT="+merged, "SWEEP_DIR="+sweepDir, "POLL=1", "WAIT_TIMEOUT=1200")
	sweepOut, sweepRC := runLogged(t, "sweep.sh", sweep)

	job := regexp.MustCompile(fmt.Sprintf(`submitted job array (\d+) \(%d tasks\)`, testShards)).FindStringSubmatch(sweepOut)
	if job == nil {
		t.Fatalf("sweep.sh submitted no job array of %d tasks (exit status %d)", testShards, sweepRC)
	}
	for i := range testShards {
		logText, err := os.ReadFile(filepath.Join(sweepDir, "logs", fmt.Sprintf("shard%d.log", i)))
		if err != nil {
			t.Fatalf("array task %d left no log: %v", i, err)
		}
		for _, want := range []string{fmt.Sprintf("job %s_%d on ", job[1], i), fmt.Sprintf("shard %d/%d: exit status 0", i, testShards)} {
			if !strings.Contains(string(logText), want) {
				t.Errorf("the log of array task %d lacks %q:\n%s", i, want, logText)
			}
		}
		// The task ran the binaries sweep.sh built once; it built none.
		if built := regexp.MustCompile(`built \d+ claim test binaries|in \d+ schema builds \(`).FindString(string(logText)); built != "" {
			t.Errorf("array task %d built test binaries of its own (%q): the sweep builds them once, for every task", i, built)
		}
		if !strings.Contains(string(logText), "schema builds of "+filepath.Join(sweepDir, "bin", "tests")) {
			t.Errorf("array task %d did not run the sweep's schema build:\n%s", i, logText)
		}
	}
	if _, err := os.Stat(filepath.Join(merged, "audit.json")); err != nil {
		t.Fatalf("the sweep wrote no merged audit (sweep.sh exit status %d): %v", sweepRC, err)
	}

	// 2. The same audit unsharded, with the binary the sweep built, and two
	// go test processes at once where each shard ran one (J=1): the claim
	// packages' records are joined in their order whatever order the
	// processes end in, so this compares a parallel run with sequential ones.
	bin := filepath.Join(sweepDir, "bin", "audit")
	fullOut, fullRC := runLogged(t, "unsharded audit", command(t, root, bin, "-bin", filepath.Join(sweepDir, "bin", "tests"),
		"-seeds", fmt.Sprint(testSeeds), "-mutant-seeds", fmt.Sprint(testMutantSeeds), "-run", testRun,
		"-mutants=true", "-j", "2", "-only", testMutant, "-out", full))
	if _, err := os.Stat(filepath.Join(full, "audit.json")); err != nil {
		t.Fatalf("the unsharded audit wrote no audit.json (exit status %d): %v\n%s", fullRC, err, fullOut)
	}
	// A subset of the claim checks leaves the other claims not checked, so
	// both exit 1 with the same problems; what matters is that they agree.
	if sweepRC != fullRC {
		t.Errorf("sweep.sh exited %d, the unsharded audit %d", sweepRC, fullRC)
	}

	// 3. Equal, apart from the output directories and timings: a merged
	// report links the shrunk counterexamples where the shard wrote them
	// (../sweep/shardN/mutants/...), and a shrink's wall time is a timing.
	paths := regexp.MustCompile(regexp.QuoteMeta(dir) + `/(sweep/shard\d+|merged|full)`)
	links := regexp.MustCompile(`\(\.\./sweep/shard\d+/mutants/`)
	timings := map[*regexp.Regexp]string{
		regexp.MustCompile(`"wall_ms": \d+`):                   `"wall_ms": 0`,
		regexp.MustCompile(`median shrink time [0-9.]+[µm]?s`): "median shrink time <timing>",
		regexp.MustCompile(`re-runs, [0-9.hms]+[µm]?s`):        "re-runs, <timing>",
	}
	read := func(d, name string) []byte {
		data, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			t.Fatal(err)
		}
		data = links.ReplaceAll(paths.ReplaceAll(data, []byte("<out>")), []byte("(mutants/"))
		for re, with := range timings { //windtunnel:unordered the patterns do not overlap
			data = re.ReplaceAll(data, []byte(with))
		}
		return data
	}
	mergedJSON, fullJSON := read(merged, "audit.json"), read(full, "audit.json")
	var a, b any
	if err := json.Unmarshal(mergedJSON, &a); err != nil {
		t.Fatalf("merged audit.json: %v", err)
	}
	if err := json.Unmarshal(fullJSON, &b); err != nil {
		t.Fatalf("unsharded audit.json: %v", err)
	}
	var diffs []string
	jsonDiff("", a, b, &diffs)
	for i, d := range diffs {
		if i == 20 {
			t.Errorf("... and %d more differences", len(diffs)-i)
			break
		}
		t.Errorf("audit.json differs (merged vs unsharded) at %s", d)
	}
	if len(diffs) == 0 && !bytes.Equal(mergedJSON, fullJSON) {
		t.Errorf("audit.json: the same values, different bytes")
	}
	if m, f := read(merged, "AUDIT.md"), read(full, "AUDIT.md"); !bytes.Equal(m, f) {
		t.Errorf("AUDIT.md differs (merged vs unsharded):\n%s", lineDiff(string(m), string(f), 10))
	}

	// 4. The reports are not empty: the sweep judged what it ran.
	var rep struct {
		Claims []struct {
			ID, Verdict string
			Seeds       int
		}
		Proofs  []struct{ ID, Verdict string }
		Probes  []struct{ Name string }
		Mutants []struct {
			ID     string
			Caught bool
		}
	}
	if err := json.Unmarshal(mergedJSON, &rep); err != nil {
		t.Fatal(err)
	}
	// A claim's seeds are its checks' seeds summed: each check ran
	// testSeeds of them.
	verdicts := map[string]string{}
	for _, c := range rep.Claims {
		if c.Seeds > 0 && c.Seeds%testSeeds == 0 {
			verdicts[c.ID] = c.Verdict
		}
	}
	for _, id := range []string{"OC-1", "OC-5", "MS-1"} {
		if verdicts[id] != "holds" {
			t.Errorf("merged audit: %s over %d seeds per check has verdict %q, want holds", id, testSeeds, verdicts[id])
		}
	}
	if !slices.ContainsFunc(rep.Proofs, func(p struct{ ID, Verdict string }) bool { return p.ID == "MS-3" && p.Verdict == "holds" }) {
		t.Errorf("merged audit: no holding MS-3 proof: %+v", rep.Proofs)
	}
	if len(rep.Probes) == 0 {
		t.Errorf("merged audit: no probes")
	}
	if len(rep.Mutants) != 1 || rep.Mutants[0].ID != testMutant || !rep.Mutants[0].Caught {
		t.Errorf("merged audit: mutants %+v, want %s caught", rep.Mutants, testMutant)
	}

	// 5. Merge refuses an incomplete sweep, naming the missing shard.
	partial, rc := runLogged(t, "merge of two of three shards", command(t, root, bin, "merge", "-out", filepath.Join(dir, "partial"),
		filepath.Join(sweepDir, "shard0"), filepath.Join(sweepDir, "shard1")))
	if want := fmt.Sprintf("shard 2/%d is missing", testShards); rc == 0 || !strings.Contains(partial, want) {
		t.Errorf("merging two of three shards: exit status %d, want an error saying %q", rc, want)
	}
}

// command is a process in dir that an interrupted test interrupts (so that
// sweep.sh cancels its array) rather than kills.
func command(t *testing.T, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second // to cancel the array and exit
	return cmd
}

// runLogged runs cmd, streaming its output into the test's, and returns the
// output and the exit status.
func runLogged(t *testing.T, what string, cmd *exec.Cmd) (string, int) {
	t.Helper()
	fmt.Fprintf(t.Output(), "sweep test: %s: %s\n", what, strings.Join(cmd.Args, " "))
	var buf bytes.Buffer
	w := io.MultiWriter(&buf, t.Output())
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return buf.String(), 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return buf.String(), exit.ExitCode()
	}
	t.Fatalf("%s: %v", what, err)
	return "", -1
}

// jsonDiff lists where a and b differ, as JSON paths.
func jsonDiff(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(av))
		for _, k := range slices.Sorted(maps.Keys(bv)) {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			jsonDiff(path+"."+k, av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(av), len(bv)) {
			var x, y any = "<absent>", "<absent>"
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			jsonDiff(fmt.Sprintf("%s[%d]", path, i), x, y, out)
		}
		return
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	if !bytes.Equal(aj, bj) {
		*out = append(*out, fmt.Sprintf("%s: %s vs %s", path, clip(string(aj)), clip(string(bj))))
	}
}

// lineDiff shows the first n lines that differ between a and b.
func lineDiff(a, b string, n int) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		x, y := "<absent>", "<absent>"
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x == y {
			continue
		}
		if len(out) == 2*n {
			out = append(out, "...")
			break
		}
		out = append(out, fmt.Sprintf("line %d: - %s", i+1, clip(x)), fmt.Sprintf("line %d: + %s", i+1, clip(y)))
	}
	return strings.Join(out, "\n")
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

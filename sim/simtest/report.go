package simtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/windtunnel/windtunnel/sim"
)

// failureReport is the block a failing seed prints: what ran, what failed,
// where the artifacts are, and the commands that reproduce the run.
func (h *harness) failureReport(t *testing.T, ps plannedSeed, res sim.Result, failure string) string {
	var b strings.Builder
	rule := strings.Repeat("=", 78)
	fmt.Fprintf(&b, "\n%s\nwindtunnel failure\n", rule)
	fmt.Fprintf(&b, "test       %s\n", t.Name())
	fmt.Fprintf(&b, "seed       %#x (%s)\n", ps.seed, ps.origin)
	fmt.Fprintf(&b, "strategy   %s\n", res.Strategy)
	if rf := h.st.replay; rf != nil && rf.Choices != nil {
		fmt.Fprintf(&b, "choices    %d world choices from %s (a shrunk run: its own workload and faults, not the seed's)\n", len(rf.Choices), rf.Path)
	}
	fmt.Fprintf(&b, "commit     %s (a replay needs the same commit)\n", commitDescription())
	fmt.Fprintf(&b, "run        %d steps, %d tasks, %v virtual, trace hash %#016x\n", res.Steps, res.Tasks, res.Elapsed, res.Hash)
	for _, l := range res.Header {
		fmt.Fprintf(&b, "header     %s\n", l)
	}
	fmt.Fprintf(&b, "failure    %s\n", indent(failure, "           "))
	fmt.Fprintf(&b, "trace tail (%s):\n", res.TraceTailAbout())
	for _, l := range res.TraceTail() {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	dir, artErr := "", errNoArtifacts
	if h.st.artifacts {
		dir, artErr = h.artifactsUnlessHung(t, ps.seed, res)
	}
	switch {
	case artErr == errNoArtifacts:
		fmt.Fprintf(&b, "artifacts  not written (-sim.artifacts=false): the command below re-runs the seed\n")
	case artErr != nil:
		fmt.Fprintf(&b, "artifacts  not written: %v\n", artErr)
	default:
		fmt.Fprintf(&b, "artifacts  %s (trace.txt: every event; replay.txt: the run's settings and schedule)\n", dir)
	}
	pkg := packagePath()
	run := runPattern(t.Name())
	fmt.Fprintf(&b, "reproduce:\n  go test %s -run %s %s -v\n", pkg, run, h.reproduceFlags(ps.seed))
	if artErr == nil {
		replay := filepath.Join(dir, "replay.txt")
		fmt.Fprintf(&b, "replay the recorded run (the file holds the seed and every setting):\n  go test %s -run %s -sim.replay=%s -v\n", pkg, run, replay)
		fmt.Fprintf(&b, "  make replay PKG=%s FILE=%s\n", pkg, replay)
	}
	b.WriteString(rule)
	return b.String()
}

// reproduceFlags are the flags that re-run exactly this seed: the seed, the
// strategy and its parameters, and every setting that shapes a run.
func (h *harness) reproduceFlags(seed uint64) string {
	st := h.st
	if st.replay != nil {
		return "-sim.replay=" + st.replay.Path
	}
	flags := fmt.Sprintf("-sim.seed=%#x -sim.strategy=%s", seed, st.strategy)
	if st.strategy == "pct" {
		flags += fmt.Sprintf(" -sim.pct.depth=%d -sim.pct.steps=%d", st.pctDepth, h.pctSteps)
	}
	if st.stepTime > 0 {
		flags += fmt.Sprintf(" -sim.steptime=%v", st.stepTime)
	}
	if st.maxSteps > 0 {
		flags += fmt.Sprintf(" -sim.maxsteps=%d", st.maxSteps)
	}
	return flags
}

// runPattern is the -run pattern that selects exactly one (sub)test.
func runPattern(name string) string {
	return fmt.Sprintf("'^%s$'", strings.ReplaceAll(regexpQuote(name), "/", "$/^"))
}

// errNoArtifacts: -sim.artifacts=false asked for none.
var errNoArtifacts = errors.New("not asked for")

// writeArtifacts re-runs the seed with the full trace on: the run is
// deterministic, so this costs one run and checks the hash on the way.
func (h *harness) writeArtifacts(t *testing.T, seed uint64, res sim.Result) (string, error) {
	dir := ArtifactDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var trace bytes.Buffer
	again, _, _ := h.runOnce(seed, &trace)
	if again.Hash != res.Hash {
		return "", fmt.Errorf("the re-run for artifacts diverged (hash %#x vs %#x): the run is not deterministic; rerun with -sim.determinism", again.Hash, res.Hash)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.txt"), trace.Bytes(), 0o644); err != nil {
		return "", err
	}
	rf := replayFile{Test: h.t.Name(), Seed: seed, Strategy: again.Strategy, StepTime: h.st.stepTime,
		MaxSteps: h.st.maxSteps, Commit: headCommit(), Decisions: again.Decisions}
	if h.st.replay != nil {
		rf.Choices, rf.Keeps = h.st.replay.Choices, h.st.replay.Keeps
	}
	if len(rf.Decisions) == 0 {
		return "", fmt.Errorf("the run made no scheduling decision to record")
	}
	if err := writeReplay(filepath.Join(dir, "replay.txt"), rf); err != nil {
		return "", err
	}
	return dir, nil
}

// ArtifactDir is where a test's artifacts for its current subtest go, for
// checkers that write their own (a porcupine visualization).
func ArtifactDir(t testing.TB) string {
	out := *flagOut
	if out == "" {
		out = os.Getenv(EnvName("sim.out"))
	}
	if out == "" {
		out = os.TempDir() + "/windtunnel"
	}
	return filepath.Join(out, sanitize(t.Name()))
}

func appendStats(path string, sum Summary) error {
	line, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var (
	commitOnce  sync.Once
	commitHash  string
	commitDirty bool
)

func readCommit() {
	commitHash = "unknown"
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return
	}
	commitHash = strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		commitDirty = len(bytes.TrimSpace(st)) > 0
	}
}

// headCommit is the checked-out commit ("unknown" outside a git checkout).
func headCommit() string {
	commitOnce.Do(readCommit)
	return commitHash
}

func commitDescription() string {
	c := headCommit()
	if commitDirty {
		c += " with uncommitted changes"
	}
	return c
}

// packagePath is the test's package relative to the module root ("./scenarios/oc").
func packagePath() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}

// sanitize makes a test name a single path element.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|', ' ', '\'', '$', '`':
			return '_'
		}
		return r
	}, name)
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

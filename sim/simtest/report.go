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
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
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
	lines, about := protocol.TraceTail(&res)
	fmt.Fprintf(&b, "trace tail (%s):\n", about)
	for _, l := range lines {
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
		fmt.Fprintf(&b, "artifacts  %s (trace.txt: the events, a long run's first and last; replay.txt: the run's settings and schedule)\n", dir)
	}
	m := currentMutation()
	if m.mutated() {
		fmt.Fprintf(&b, "code       %s, not the checkout's\n", m)
	}
	fmt.Fprintf(&b, "reproduce:\n  %s\n", h.seedCommand(ps.seed, false))
	fmt.Fprintf(&b, "shrink it to a minimal run, with its interleaving table and timeline page:\n  %s\n", h.seedCommand(ps.seed, true))
	if artErr == nil {
		fmt.Fprintf(&b, "replay the recorded run (the file holds the seed, every setting and the code it flew):\n  %s\n", h.fileCommand(filepath.Join(dir, "replay.txt"), false))
	}
	b.WriteString(rule)
	return b.String()
}

// runPattern is the -run pattern that selects exactly one (sub)test.
func runPattern(name string) string { return shellQuote(RunPattern(name)) }

// replayFileOf is the replay file of one of this test's runs: the test,
// its package, the settings and the code it flew, and its schedule.
func (h *harness) replayFileOf(seed uint64, strategy string, decisions []int32) replayFile {
	m := currentMutation()
	pkg, _ := modulePackage()
	return replayFile{Test: h.t.Name(), Package: pkg, Seed: seed, Strategy: strategy, StepTime: h.st.stepTime,
		MaxSteps: h.st.maxSteps, Commit: headCommit(), Mutant: m.id, Catalogue: m.catalogue, Decisions: decisions}
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
	trace := newTraceBuffer(maxTraceBytes)
	again, _, _ := h.runOnce(seed, trace)
	if again.Hash != res.Hash {
		return "", fmt.Errorf("the re-run for artifacts diverged (hash %#x vs %#x): the run is not deterministic; rerun with -sim.determinism", again.Hash, res.Hash)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.txt"), trace.Bytes(), 0o644); err != nil {
		return "", err
	}
	rf := h.replayFileOf(seed, again.Strategy, again.Decisions)
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
// checkers that write their own (a porcupine visualization). It is
// absolute, so that printed paths work from any directory; a mutant's
// artifacts go under a directory of the mutant's; a replay's go into a
// fresh directory beside the ones before, so that it never writes over the
// file it replays.
func ArtifactDir(t testing.TB) string {
	out := *flagOut
	if out == "" {
		out = os.Getenv(EnvName("sim.out"))
	}
	if out == "" {
		out = os.TempDir() + "/windtunnel"
	}
	if abs, err := filepath.Abs(out); err == nil {
		out = abs
	}
	if m := currentMutation(); m.id != "" {
		out = filepath.Join(out, "mutant="+sanitize(m.id))
	}
	dir := filepath.Join(out, sanitize(t.Name()))
	if settingsBase.replay != nil {
		return freshDir(dir, "replay-")
	}
	return dir
}

var (
	freshMu   sync.Mutex
	freshDirs = map[string]string{}
)

// maxFreshDirs bounds the search for an unused name.
const maxFreshDirs = 10000

// freshDir is dir/prefixN for the first N whose directory does not exist
// yet, the same for every call of the process with the same dir.
func freshDir(dir, prefix string) string {
	freshMu.Lock()
	defer freshMu.Unlock()
	if d, ok := freshDirs[dir]; ok {
		return d
	}
	d := filepath.Join(dir, prefix+"unnumbered")
	for n := 1; n <= maxFreshDirs; n++ {
		try := filepath.Join(dir, fmt.Sprint(prefix, n))
		if _, err := os.Lstat(try); os.IsNotExist(err) {
			d = try
			break
		}
	}
	freshDirs[dir] = d
	return d
}

// notTheInput refuses to write path when it is the replay file the run
// reads: whatever goes wrong elsewhere, a run never destroys its input.
func notTheInput(path string) error {
	rf := settingsBase.replay
	if rf == nil {
		return nil
	}
	a, errA := filepath.Abs(path)
	b, errB := filepath.Abs(rf.Path)
	if errA == nil && errB == nil && a == b {
		return fmt.Errorf("refusing to write %s: it is the replay file this run reads", path)
	}
	return nil
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

// packagePath is the test's package relative to the module root
// ("./scenarios/oc"); "." outside a module.
func packagePath() string {
	if p, ok := modulePackage(); ok {
		return p
	}
	return "."
}

// modulePackage is the test's package relative to the module root, and
// whether the working directory is inside a module at all.
func modulePackage() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return "", false
			}
			if rel == "." {
				return ".", true
			}
			return "./" + filepath.ToSlash(rel), true
		}
		if filepath.Dir(dir) == dir {
			return "", false
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

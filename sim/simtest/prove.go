package simtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// ProofOptions configures a bounded-exhaustive check.
type ProofOptions struct {
	// MaxPreemptions, Reduction and MaxSchedules bound the exploration
	// (sim.ExploreOptions). MaxSchedules 0 means 200,000 here: a proof
	// that does not exhaust its space within it fails.
	MaxPreemptions int
	Reduction      sim.Reduction
	MaxSchedules   int64
	// Config is the base configuration (Seed 0 means 1: the world's draws
	// are fixed, only the schedule varies).
	Config sim.Config
	// Visit, if set, sees every explored schedule's result.
	Visit func(r sim.Result)
}

// ProofResult is an exploration and where its failing schedule was written.
type ProofResult struct {
	sim.ExploreResult
	Wall time.Duration
	// ReplayFile is the replay file of the first failing schedule ("" when
	// none failed or it could not be written).
	ReplayFile string
	// Strategy names the exploration as the replay file records it.
	Strategy string
}

// DefaultProofSchedules bounds a proof's exploration when
// ProofOptions.MaxSchedules is 0.
const DefaultProofSchedules = 200_000

// Prove runs body under every schedule within the bound (sim.Explore) and
// fails t when a schedule fails, the space is not exhausted, or (with
// -sim.determinism) a second exploration differs from the first. A failing
// schedule is written as a replay file in the harness's own format, and the
// failure block prints the command that replays it:
//
//	go test ./scenarios/ms -run '^TestMS3_ProofFence$' -sim.replay=FILE -v
//
// Given -sim.replay, Prove does not explore: it runs the recorded schedule
// once and reports it like a failing seed.
func Prove(t *testing.T, opts ProofOptions, body func(s *sim.Sim)) ProofResult {
	t.Helper()
	st, err := currentSettings(1)
	if err != nil {
		t.Fatalf("windtunnel: %v", err)
		return ProofResult{}
	}
	scanPackage(t, st)
	cfg := opts.Config
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = protocol.DefaultExploreMaxSteps
	}
	xo := sim.ExploreOptions{MaxPreemptions: opts.MaxPreemptions, Reduction: opts.Reduction, MaxSchedules: opts.MaxSchedules, Visit: opts.Visit}
	if xo.MaxSchedules == 0 {
		xo.MaxSchedules = DefaultProofSchedules
	}
	out := ProofResult{Strategy: fmt.Sprintf("explore(preemptions=%d,reduction=%s)", opts.MaxPreemptions, opts.Reduction)}
	if st.replay != nil {
		if err := st.replay.belongsTo(t.Name()); err != nil {
			t.Fatalf("windtunnel: -sim.replay: %v", err)
			return out
		}
		replayProofSchedule(t, cfg, st, body)
		return out
	}
	start := time.Now()
	res := sim.Explore(cfg, xo, body)
	out.ExploreResult, out.Wall = res, time.Since(start)
	if res.Err != nil {
		t.Errorf("windtunnel: proof: %v", res.Err)
		return out
	}
	t.Logf("windtunnel: proof %s: %s in %v (%.0f schedules/s)", t.Name(), res, out.Wall.Round(time.Millisecond), float64(res.Runs)/out.Wall.Seconds())
	if st.determinism {
		again := sim.Explore(cfg, xo, body)
		if again.Explored != res.Explored || again.Pruned != res.Pruned || again.Failures != res.Failures || again.Exhausted != res.Exhausted {
			t.Errorf("windtunnel: determinism: the proof explored differently twice: %s, then %s", res, again)
		}
	}
	switch {
	case res.Failures > 0:
		out.ReplayFile = writeProofReplay(t, cfg, out)
		t.Error(proofFailureBlock(t, out, res.FailedRun))
	case !res.Exhausted:
		t.Errorf("windtunnel: proof %s: the space was not exhausted within %d schedules (%s)", t.Name(), xo.MaxSchedules, res)
	}
	return out
}

func writeProofReplay(t *testing.T, cfg sim.Config, p ProofResult) string {
	dir := ArtifactDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	path := filepath.Join(dir, "replay.txt")
	m := currentMutation()
	pkg, _ := modulePackage()
	rf := replayFile{Test: t.Name(), Package: pkg, Seed: cfg.Seed, Strategy: p.Strategy, MaxSteps: cfg.MaxSteps, Commit: headCommit(),
		Mutant: m.id, Catalogue: m.catalogue, Decisions: p.Decisions}
	if err := writeReplay(path, rf); err != nil {
		return ""
	}
	return path
}

func proofFailureBlock(t *testing.T, p ProofResult, run sim.Result) string {
	var b strings.Builder
	rule := strings.Repeat("=", 78)
	fmt.Fprintf(&b, "\n%s\nwindtunnel proof failure\n", rule)
	fmt.Fprintf(&b, "test       %s\n", t.Name())
	fmt.Fprintf(&b, "explored   %s\n", p.ExploreResult)
	fmt.Fprintf(&b, "commit     %s (a replay needs the same commit)\n", commitDescription())
	fmt.Fprintf(&b, "failure    %s\n", indent(p.Failure.Error(), "           "))
	lines, about := protocol.TraceTail(&run)
	fmt.Fprintf(&b, "trace tail (%s):\n", about)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if p.ReplayFile != "" {
		command := fmt.Sprintf("go test %s%s -run %s -sim.replay=%s -v", overlayFlag(currentMutation()), packagePath(), runPattern(t.Name()), shellQuote(p.ReplayFile))
		if currentMutation().id != "" {
			command = "make replay FILE=" + shellQuote(p.ReplayFile) // the file names the mutant
		}
		fmt.Fprintf(&b, "replay the failing schedule:\n  %s\n", command)
	} else {
		b.WriteString("the failing schedule could not be written\n")
	}
	b.WriteString(rule)
	return b.String()
}

// replayProofSchedule runs a proof's recorded failing schedule once.
func replayProofSchedule(t *testing.T, cfg sim.Config, st settings, body func(s *sim.Sim)) {
	cfg.Seed = st.replay.Seed
	cfg.MaxSteps = st.replay.MaxSteps
	cfg.Strategy = sim.Replay(st.replay.Decisions)
	res := sim.Run(cfg, body)
	if res.Err == nil {
		t.Logf("windtunnel: the recorded schedule (%d decisions) ran to its end without a failure", len(st.replay.Decisions))
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "windtunnel proof schedule replayed: %s\nrun        %d steps, %d tasks, trace hash %#016x\nfailure    %s\ntrace tail:\n",
		st.replay.Path, res.Steps, res.Tasks, res.Hash, indent(res.Err.Error(), "           "))
	lines, _ := protocol.TraceTail(&res)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	t.Error(b.String())
}

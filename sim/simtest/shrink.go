package simtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/faultswitch"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// ShrinkSummary is what -sim.shrink writes next to a failing seed's
// artifacts (shrunk/shrink.json), for the audit to link each counterexample
// to its minimal reproduction.
type ShrinkSummary struct {
	Test      string       `json:"test"`
	Seed      string       `json:"seed"`
	Signature string       `json:"signature"`
	Failure   string       `json:"failure"`
	Before    shrink.Stats `json:"before"`
	After     shrink.Stats `json:"after"`
	Attempts  int          `json:"attempts"`
	Accepted  int          `json:"accepted"`
	// Controlled says the code without the fault under test (a schema
	// build's mutant switched off: faultswitch) passes the shrunk run, and
	// every smaller run was kept only if it passed it too; Refused counts
	// the smaller failing runs refused because it failed them as well.
	Controlled bool `json:"controlled"`
	Refused    int  `json:"refused,omitempty"`
	// ControlFailed says the shrink was not done because the seed's run
	// fails without the fault under test too (shrink.ErrControlFails).
	ControlFailed bool `json:"control_failed,omitempty"`
	// NotReplayed says the shrink was not done because a run did not
	// replay (shrink.ErrNotReplayed): a determinism bug.
	NotReplayed bool   `json:"not_replayed,omitempty"`
	WallMs      int64  `json:"wall_ms"`
	Stopped     string `json:"stopped,omitempty"`
	Replay      string `json:"replay"`
	Command     string `json:"command"`
	Table       string `json:"table"`
	Timeline    string `json:"timeline,omitempty"`
	ShrinkFail  string `json:"shrink_error,omitempty"`
}

// ShrinkFile is the name of the summary in a failing seed's artifact
// directory.
const ShrinkFile = "shrunk/shrink.json"

// shrinkSeed shrinks a failing seed and returns the part of the failure
// block that shows the result: what was removed, the interleaving table of
// the shrunk run, where its timeline page and replay file are, and the
// command that replays it.
func (h *harness) shrinkSeed(t *testing.T, ps plannedSeed, failure string) string {
	var b strings.Builder
	dir := filepath.Join(ArtifactDir(t), "shrunk")
	sum := ShrinkSummary{Test: t.Name(), Seed: fmt.Sprintf("%#x", ps.seed)}
	fail := func(err error) string {
		sum.ShrinkFail, sum.ControlFailed, sum.NotReplayed = err.Error(), errors.Is(err, shrink.ErrControlFails), errors.Is(err, shrink.ErrNotReplayed)
		_ = writeSummary(dir, sum)
		return fmt.Sprintf("\nshrink     not done: %v\n", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	base := h.config(ps.seed)
	strategy := func() sim.Strategy { return h.st.strategyFor(max(h.pctSteps, 1), h.surw) }
	if rf := h.st.replay; rf != nil {
		// A replayed run's schedule is its decision list: followed where
		// it fits the edited world, non-preemptive beyond.
		strategy = func() sim.Strategy { return guided(rf.Decisions) }
	}
	if h.st.shrinkMore > 0 {
		t.Logf("windtunnel: shrinking seed %#x (at most %d re-runs, %d more if that is not enough)", ps.seed, h.st.shrinkTries, h.st.shrinkMore)
	} else {
		t.Logf("windtunnel: shrinking seed %#x (at most %d re-runs)", ps.seed, h.st.shrinkTries)
	}
	var control shrink.Runner
	if faultswitch.Registered() {
		// The binary carries a fault that can be switched off (a mutant of
		// a schema build): a counterexample must pass without it.
		if h.quiesce != nil {
			h.quiesce()
		}
		control = func(cfg sim.Config) (res sim.Result, failure string) {
			faultswitch.Without(func() { res, _, failure = h.runConfig(cfg) })
			return res, failure
		}
	}
	out, err := func() (out shrink.Outcome, err error) {
		// A bug in the shrinker must not take the failure report with it:
		// the seed's block above stands, the shrink says what went wrong.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("the shrinker panicked (a windtunnel bug; the failure above stands): %v", r)
			}
		}()
		return shrink.Shrink(func(cfg sim.Config) (sim.Result, string) {
			res, _, f := h.runConfig(cfg)
			return res, f
		}, base, failure, shrink.Options{
			MaxAttempts:  h.st.shrinkTries,
			MoreAttempts: h.st.shrinkMore,
			MaxWall:      h.st.shrinkWall,
			Strategy:     strategy,
			Progress:     func(l string) { t.Log("windtunnel: " + l) },
			Control:      control,
		})
	}()
	if err != nil {
		return fail(err)
	}
	// The shrunk run once more, recorded, for the table and the page.
	cfg := base
	o := protocol.ConfigOf(&cfg)
	o.ReplayChoices, o.Choices, o.Keeps = true, out.Choices, out.Keeps
	cfg.Strategy = sim.Replay(out.Decisions)
	replay := filepath.Join(dir, "replay.txt")
	command := h.fileCommand(replay, false)
	ex, exErr := h.explain(cfg, dir, fmt.Sprintf("seed %#x, shrunk", ps.seed), command)
	res, shrunkFailure, table := ex.Result, ex.Failure, ex.Text
	if exErr == nil && (res.Hash != out.Result.Hash || shrink.Signature(shrunkFailure) != out.Signature) {
		return fail(fmt.Errorf("the recorded re-run of the shrunk run diverged (hash %#x vs %#x): the test is not deterministic", res.Hash, out.Result.Hash))
	}
	if ex.Table == "" {
		return fail(exErr)
	}
	// What the shrink did stands in the summary even when its run's file
	// cannot be written.
	sum.Signature, sum.Failure = out.Signature, firstLine(shrunkFailure)
	sum.Before, sum.After = out.Before, out.After
	sum.Attempts, sum.Accepted, sum.WallMs, sum.Stopped = out.Attempts, out.Accepted, out.Wall.Milliseconds(), out.Stopped
	sum.Controlled, sum.Refused = out.Controlled, out.Refused
	rf := h.replayFileOf(ps.seed, "replay(shrunk)", out.Decisions)
	rf.Choices, rf.Keeps = out.Choices, out.Keeps
	if out.Choices == nil {
		rf.Choices = []uint64{}
	}
	if err := writeReplay(replay, rf); err != nil {
		return fail(err)
	}
	page, pageErr := ex.Timeline, exErr
	tablePath := ex.Table
	sum.Replay, sum.Command, sum.Table, sum.Timeline = replay, command, tablePath, page
	if err := writeSummary(dir, sum); err != nil {
		return fail(err)
	}

	fmt.Fprintf(&b, "\nshrunk     %s\n", out.Removed())
	fmt.Fprintf(&b, "           %d re-runs (%d shrank it) in %v", out.Attempts, out.Accepted, out.Wall.Round(time.Millisecond))
	if out.Stopped != "" {
		fmt.Fprintf(&b, "; stopped early: %s", out.Stopped)
	}
	fmt.Fprintf(&b, "\n           still fails with %q:\n           %s\n", out.Signature, indent(firstLine(shrunkFailure), "           "))
	if out.Controlled {
		fmt.Fprintf(&b, "           and passes without the fault under test (%d control re-runs; %d smaller failing runs refused: they failed without it too)\n", out.ControlRuns, out.Refused)
	}
	fmt.Fprintf(&b, "interleaving of the shrunk run:\n  %s\n", indent(strings.TrimRight(table, "\n"), "  "))
	if pageErr != nil {
		fmt.Fprintf(&b, "timeline   not written: %v\n", pageErr)
	} else if page != "" {
		fmt.Fprintf(&b, "timeline   %s\n", page)
	}
	fmt.Fprintf(&b, "replay the shrunk run (the file holds its choices and schedule):\n  %s\n", command)
	return b.String()
}

func writeSummary(dir string, sum ShrinkSummary) error {
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "shrink.json"), append(data, '\n'), 0o644)
}

// ReadShrinkSummary reads a shrink.json.
func ReadShrinkSummary(path string) (ShrinkSummary, error) {
	var sum ShrinkSummary
	data, err := os.ReadFile(path)
	if err != nil {
		return sum, err
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		return sum, fmt.Errorf("%s: %v", path, err)
	}
	return sum, nil
}

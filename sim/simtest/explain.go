package simtest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/interleave"
)

// Explanation is what a person reads about one run: its interleaving table
// and its timeline page, written next to its trace.
type Explanation struct {
	Table    string // the interleaving table's file
	Timeline string // the timeline page's file ("" if none could be drawn)
	Trace    string // the full trace's file
	Text     string // the table itself
	Failure  string // the run's failure text, "" for a passing run
	Result   sim.Result
}

// Explain re-runs seed (one of the test's, with its settings) with the
// full record on and writes its interleaving table, timeline page and
// trace into dir. A claim check calls it for the seed that shows a
// documented deviation, so that the audit links to a page of it.
func (r Results[R]) Explain(seed uint64, dir string) (Explanation, error) {
	if r.h == nil || r.h.body == nil {
		return Explanation{}, fmt.Errorf("simtest: Explain on results that did not come from Seeds")
	}
	cfg := r.h.config(seed)
	return r.h.explain(cfg, dir, fmt.Sprintf("seed %#x", seed), r.h.seedCommand(seed, false))
}

// explain runs cfg recorded and writes what a person reads about it.
func (h *harness) explain(cfg sim.Config, dir, title, command string) (Explanation, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Explanation{}, err
	}
	cfg.Record = true
	trace := newTraceBuffer(maxTraceBytes)
	cfg.TraceOut = trace
	res, _, failure := h.runConfig(cfg)
	if res.Record == nil {
		return Explanation{}, fmt.Errorf("the run kept no record: %v", res.Err)
	}
	step := int64(0)
	if f := res.Failure(); f != nil {
		step = f.Step
	}
	ex := Explanation{Failure: failure, Result: res,
		Table: filepath.Join(dir, "interleaving.txt"), Trace: filepath.Join(dir, "trace.txt")}
	ex.Text = interleave.String(res.Record, interleave.Options{Failure: failure, FailureStep: step})
	if err := os.WriteFile(ex.Table, []byte(ex.Text), 0o644); err != nil {
		return ex, err
	}
	if err := os.WriteFile(ex.Trace, trace.Bytes(), 0o644); err != nil {
		return ex, err
	}
	page, err := writeTimeline(dir, h.t.Name()+" "+title, failure, res, trace.String(), command)
	if err != nil {
		return ex, fmt.Errorf("timeline: %v", err)
	}
	ex.Timeline = page
	return ex, nil
}

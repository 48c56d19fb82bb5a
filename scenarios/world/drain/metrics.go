package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/collector"
)

// Expected is one series the world's own account predicts, with the claim
// the comparison serves.
type Expected struct {
	Claim string
	Value int64
	What  string // how the world counted it
}

// series keys a labelled series as stats.Registry.Snapshot does.
func series(name, label, value string) string { return fmt.Sprintf("%s{%s=%q}", name, label, value) }

// Account is the world's own count of what every series the collector and
// its flush worker register must read once the run has ended. It is taken
// from the history (the answers the checkers hold to the model), the drains'
// facts seen from outside (r), the probe's clock and the worker plan. It
// never reads a counter of the collector.
func (w *World) Account(r *checks.CollectorReport) map[string]Expected {
	var recorded, invalid, full, pruned, drains, drained int64
	recorded = int64(len(w.Initial))
	for _, op := range w.Ops {
		switch op.Kind {
		case KindRecord:
			switch {
			case op.Err == nil:
				recorded++
			case errors.Is(op.Err, collector.ErrInvalid):
				invalid++
			case errors.Is(op.Err, collector.ErrFull):
				full++
			}
		case KindPrune:
			if op.Err == nil {
				pruned += op.Out.Count
			}
		case KindDrain:
			if op.Err != nil {
				continue
			}
			drains++
			drained += int64(len(op.Out.Points))
			for _, b := range op.Buckets {
				drained += b.Count
			}
		}
	}
	var moved int64
	for _, d := range r.Drains {
		moved += d.RecordsBetween - d.PrunedBetween
	}
	acc := map[string]Expected{
		collector.MetricRecorded:                              {"DR-1", recorded, "points preloaded and records answered nil"},
		series(collector.MetricRejected, "reason", "invalid"): {"DR-1", invalid, "records answered ErrInvalid"},
		series(collector.MetricRejected, "reason", "full"):    {"DR-1", full, "records answered ErrFull"},
		collector.MetricBuffered:                              {"DR-1", recorded - pruned - drained, "recorded minus pruned minus drained, every task ended"},
		collector.MetricPruned:                                {"DR-10", pruned, "the counts prunes returned (held to the model)"},
		collector.MetricDrains:                                {"DR-4", drains, "drains that returned"},
		collector.MetricDrained:                               {"DR-1", drained, "points and bucket counts drains returned (held to the model)"},
		collector.MetricMovedUnderLock:                        {"DR-2", moved, "records between each drain's swaps, less what prunes took of them (lock order)"},
		collector.MetricLockHoldMaxNs:                         {"DR-8", int64(w.Probe.LongestHold()), "the longest span of clock readings within one write-lock hold (probe)"},
	}
	if wp := w.worker; wp != nil && wp.Registry == w.Registry {
		failed := int64(len(wp.Injected))
		for _, op := range w.Ops {
			// A flush drain that gave up because the worker stopped is no failure.
			if op.Task == "flush" && op.Err != nil && !errors.Is(op.Err, context.Canceled) {
				failed++
			}
		}
		acc[series(collector.MetricWorkerCycles, "worker", "metrics_flush")] = Expected{"DR-9", int64(wp.Calls), "drain function calls by the worker, all returned at its stop"}
		acc[series(collector.MetricWorkerErrors, "worker", "metrics_flush")] = Expected{"DR-9", failed, "injected panics and errors, and flush drains that failed"}
	}
	return acc
}

// CheckMetrics compares every series of the world's registry with Account.
// A series the account does not predict is a violation too: a metric that
// no check compares counts nothing anyone verified.
func (w *World) CheckMetrics(r *checks.CollectorReport) []checks.Violation {
	acc := w.Account(r)
	got := w.Registry.Snapshot()
	names := make([]string, 0, len(got))
	for name := range got { //windtunnel:unordered collecting the names, sorted below
		names = append(names, name)
	}
	slices.Sort(names)
	var out []checks.Violation
	for _, name := range names {
		want, ok := acc[name]
		switch {
		case !ok:
			out = append(out, checks.Violation{Claim: "harness", Msg: fmt.Sprintf("series %s is registered but the drain world's account does not predict it: no check compares it", name)})
		case got[name] != want.Value:
			out = append(out, checks.Violation{Claim: want.Claim, Msg: fmt.Sprintf("series %s reads %d, the world counted %d (%s)", name, got[name], want.Value, want.What)})
		}
	}
	for name, want := range acc { //windtunnel:unordered the violations are sorted below
		if _, ok := got[name]; !ok {
			out = append(out, checks.Violation{Claim: want.Claim, Msg: fmt.Sprintf("series %s is not registered", name)})
		}
	}
	slices.SortFunc(out, func(a, b checks.Violation) int { return strings.Compare(a.Msg, b.Msg) })
	return out
}

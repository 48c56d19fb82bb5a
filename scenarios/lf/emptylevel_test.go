package lf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/logfilter"
	"github.com/windtunnel/windtunnel/impl/logfilter/logfiltertest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// lf3Directed are LF-3's directed lists, each with the target whose level
// is empty and is not overridden later in the list.
var lf3Directed = []struct{ list, target string }{
	{"buzz_relay=", "buzz_relay"},
	{" buzz_relay= ", "buzz_relay"},
	{"warn,buzz_relay=", "buzz_relay"},
	{"buzz_relay=,,", "buzz_relay"},
	{"error,buzz_relay::conn=,info", "buzz_relay::conn"},
	{"info, other= ", "other"},
	{"buzz_relay=,buzz_relayer=info", "buzz_relay"},
	{"buzz_relay=off,buzz_relay=", "buzz_relay"},
}

// logsEvent reports whether f, installed alone, writes an event at level
// from target outside spans: judged by the captured output.
func logsEvent(f *logfilter.Filter, target string, level slog.Level) (bool, error) {
	var buf bytes.Buffer
	h, err := logfilter.NewSpans(f).Handler(logfiltertest.TextHandler(&buf), f)
	if err != nil {
		return false, err
	}
	slog.New(h).With(logfilter.Target(target)).Log(context.Background(), level, "probe")
	return buf.Len() > 0, nil
}

// covered are the event targets a directive for target covers (the target
// and those below it at a "::" boundary), by the checks' own rule.
func covered(target string) []string {
	var out []string
	for _, e := range logfiltertest.EventTargets {
		if e == target || strings.HasPrefix(e, target+"::") {
			out = append(out, e)
		}
	}
	return out
}

// lf3Tally is what LF-3's check counted.
type lf3Tally struct {
	smp                      claims.Sample
	directed, built          int
	levelsChecked            int64
	tableDiffers, lockingNew int
}

// routing checks that New keeps a list with an empty level on the
// span-aware path (observed from outside) and that what New's filter logs
// is exactly what the span-aware filter logs, over the whole workload. It
// returns whether the target table's own reading of the list would have
// logged something else.
func (tl *lf3Tally) routing(list string, wrong func(string, ...any)) bool {
	path, kind, err := observePath(list)
	switch {
	case err != nil:
		wrong("New rejected it: %v", err)
		return false
	case path != pathLocking || kind != logfilter.KindSpanAware:
		wrong("New's filter took the %s path (observed: %s): the target table would read the empty level as ERROR", kind, path)
		return false
	}
	tl.lockingNew++
	routed, _ := logfilter.New(rt.Real(), list)
	aware, err := logfilter.NewSpanAware(rt.Real(), list)
	if err != nil {
		wrong("the span-aware filter rejected it: %v", err)
		return false
	}
	want, _, _ := logfiltertest.Workload(aware)
	if got, _, _ := logfiltertest.Workload(routed); got != want {
		wrong("New's filter logged otherwise than the span-aware filter: %s", logfiltertest.FirstDiff(got, want))
	}
	table, err := logfilter.NewTargets(list)
	if err != nil {
		return false
	}
	got, _, _ := logfiltertest.Workload(table)
	return got != want
}

// TestLF3_EmptyLevelNeverTakesTheTargetPath checks LF-3: an empty level
// (`target=`) means every level on the span-aware filter, while the target
// table's own parser reads it as ERROR, so such a list never takes the
// target path. Directed lists show both readings in captured output: every
// named level logged from the target and the targets below it on the
// span-aware filter, only ERROR and above from the target table built
// directly. They also show that New keeps each on the span-aware path,
// observed from outside, logging what the span-aware filter logs.
// Generated lists mix empty levels into plain lists, inside the LF-2
// differential's workload.
func TestLF3_EmptyLevelNeverTakesTheTargetPath(t *testing.T) {
	var tl lf3Tally
	defer func() { tl.report(t) }()
	for _, c := range lf3Directed {
		tl.directed++
		tl.smp.Of++
		wrong := onceWrong(&tl.smp, fmt.Sprintf("list %q: ", c.list))
		aware, err1 := logfilter.NewSpanAware(rt.Real(), c.list)
		table, err2 := logfilter.NewTargets(c.list)
		if err1 != nil || err2 != nil {
			wrong("rejected: span-aware %v, target table %v", err1, err2)
			continue
		}
		for _, target := range covered(c.target) {
			for _, l := range namedLevels {
				tl.levelsChecked++
				a, _ := logsEvent(aware, target, l)
				tb, _ := logsEvent(table, target, l)
				if !a {
					wrong("the span-aware filter dropped %s from %s: an empty level must mean every level", l, target)
				}
				if tb != (l >= levelError) {
					wrong("the target table logged=%v at %s from %s: its parser reads an empty level as ERROR", tb, l, target)
				}
			}
		}
		before := tl.smp.Wrong
		if differs := tl.routing(c.list, wrong); !differs && tl.smp.Wrong == before {
			wrong("the target table's reading logged the same as the span-aware filter: the directed case shows nothing")
		} else if differs {
			tl.tableDiffers++
		}
	}
	seen := map[string]bool{}
	levels := []string{"trace", "debug", "info", "warn", "error", "off"}
	rapid.Check(t, func(rq *rapid.T) {
		segs := make([]string, rapid.IntRange(1, 6).Draw(rq, "segments"))
		empty := rapid.IntRange(0, len(segs)-1).Draw(rq, "the empty level")
		for i := range segs {
			target := rapid.SampledFrom(lf2Rules).Draw(rq, "target")
			switch {
			case i == empty || rapid.IntRange(0, 4).Draw(rq, "another empty level") == 0:
				segs[i] = target + rapid.SampledFrom([]string{"=", "= ", "=\t"}).Draw(rq, "empty level")
			case rapid.Bool().Draw(rq, "bare level"):
				segs[i] = rapid.SampledFrom(levels).Draw(rq, "level")
			default:
				segs[i] = target + "=" + rapid.SampledFrom(levels).Draw(rq, "level")
			}
		}
		list := strings.Join(segs, ",")
		if seen[list] {
			return
		}
		seen[list] = true
		tl.built++
		tl.smp.Of++
		before := tl.smp.Wrong
		wrong := onceWrong(&tl.smp, fmt.Sprintf("generated list %q: ", list))
		if tl.routing(list, wrong) {
			tl.tableDiffers++
		}
		if tl.smp.Wrong > before {
			rq.Fatalf("%s", tl.smp.Witness)
		}
	})
}

func (tl *lf3Tally) report(t *testing.T) {
	t.Helper()
	smp := tl.smp
	verdict := findings.Holds
	switch {
	case smp.Wrong > 0:
		t.Errorf("LF-3: %d of %d lists wrong; first: %s", smp.Wrong, smp.Of, smp.Witness)
		verdict = findings.Violated
	case tl.tableDiffers == 0:
		t.Errorf("LF-3: no list showed the two readings differ: the check cannot see a misrouted list")
		verdict = findings.Violated
	}
	findings.Report(t, findings.Record{
		ID: "LF-3", Verdict: verdict,
		Measured: fmt.Sprintf("%d of %d lists with an empty level wrong (%d directed: %d target-level events read as every level by the span-aware filter and as ERROR by the target table; %d generated through the LF-2 workload); New kept %d of them on the span-aware path, observed from outside, and for %d the target table's reading would have logged otherwise",
			smp.Wrong, smp.Of, tl.directed, tl.levelsChecked, tl.built, tl.lockingNew, tl.tableDiffers),
		Bound: "0 wrong", Value: float64(smp.Wrong), Seeds: 1, Witness: smp.Witness,
		Note: "deterministic directed lists plus pgregory.net/rapid lists, no simulator; readings judged by captured slog output",
	})
}

package checks_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/model"
)

const sec = checks.Instant(time.Second)

var lim = checks.TimeoutLimits{Tick: time.Second, Continuation: time.Millisecond}

func inact(conn uint64, deadline, at checks.Instant) checks.TimeoutEvent {
	return checks.TimeoutEvent{Conn: conn, Kind: model.InactivityTimeout, Deadline: deadline, At: at}
}

func evict(conn uint64, at checks.Instant) checks.TimeoutEvent {
	return checks.TimeoutEvent{Conn: conn, Kind: model.EvictionTimeout, At: at}
}

func claimsOf(vs *checks.Violations) []string {
	var out []string
	for _, v := range vs.Of() {
		out = append(out, v.Claim)
	}
	return out
}

// A clean history: same timeouts and evictions as the reference, one in a
// continuation 1 ms after its pass, one with its deadline exactly on a
// tick, fired a whole tick later. The figures say so.
func TestCheckTimeoutsAcceptsTheReferencesTimeouts(t *testing.T) {
	h := checks.CopHistory{Thread: 1, Budget: 2,
		Fired: []checks.TimeoutEvent{inact(1, 1500*sec/1000, 2*sec), inact(2, 3*sec, 4*sec), inact(3, 3*sec+1, 4*sec+checks.Instant(time.Millisecond)), evict(4, 5*sec+5)},
		Ref:   []checks.TimeoutEvent{inact(1, 1500*sec/1000, 2*sec), inact(2, 3*sec, 4*sec), inact(3, 3*sec+1, 4*sec), evict(4, 5*sec+5)},
	}
	h.Ref[2].Open = 3
	var vs checks.Violations
	f := checks.CheckTimeouts(h, lim, &vs)
	assert.Empty(t, vs.Of())
	assert.Equal(t, 4, f.Matched)
	assert.Equal(t, 1, f.Aligned)
	assert.Equal(t, 1, f.Evicted)
	assert.Equal(t, 1, f.Continued)
	assert.Equal(t, time.Millisecond, f.MaxLag)
	assert.Equal(t, time.Second, f.MaxLate, "the deadline on the tick fired one tick later")
	assert.Equal(t, 500*time.Millisecond, f.MinMargin)
}

// Every check of CheckTimeouts can fail. The cases cover a timeout the
// reference never fired and one it fired that the wheel did not. They cover a
// timeout at its deadline, before the reference's pass, later than its
// continuations allow, and off the continuation grid. They cover an eviction
// at another instant, evictions in another order, and a connection that fires
// after its eviction.
func TestCheckTimeoutsReportsEachViolation(t *testing.T) {
	ms := checks.Instant(time.Millisecond)
	h := checks.CopHistory{Thread: 3, Budget: 4,
		Fired: []checks.TimeoutEvent{
			inact(1, sec, 2*sec),      // only the wheel
			inact(3, 2*sec, 2*sec),    // at its deadline
			inact(4, sec+1, 2*sec-ms), // before the pass
			inact(5, sec+1, 2*sec+5*ms),
			inact(6, sec+1, 2*sec+ms+ms/5),
			evict(7, 3*sec+ms),
			evict(9, 3*sec+2*ms),
			evict(8, 3*sec+3*ms),
			inact(9, 3*sec, 4*sec), // after its eviction
		},
		Ref: []checks.TimeoutEvent{
			inact(2, sec, 2*sec), // only the reference
			inact(3, 2*sec, 2*sec),
			inact(4, sec+1, 2*sec),
			{Conn: 5, Kind: model.InactivityTimeout, Deadline: sec + 1, At: 2 * sec, Open: 4}, // one continuation allowed
			{Conn: 6, Kind: model.InactivityTimeout, Deadline: sec + 1, At: 2 * sec, Open: 40},
			evict(7, 3*sec),
			evict(8, 3*sec+2*ms),
			evict(9, 3*sec+3*ms),
		},
	}
	var vs checks.Violations
	vs.PerClaim = 100
	checks.CheckTimeouts(h, lim, &vs)
	var b strings.Builder
	for _, v := range vs.Of() {
		b.WriteString(v.String() + "\n")
	}
	msgs := b.String()
	for _, want := range []string{
		"TW-2: thread 3: the wheel cop reported conn 1 inactivity deadline +1s fired at +2s; the full scan never did",
		"TW-2: thread 3: the full scan reported conn 2",
		"conn 3 inactivity deadline +2s fired at +2s: not after its deadline",
		"conn 4 inactivity deadline +1.000000001s fired at +1.999s, before the full scan's pass at +2s",
		"TW-4: thread 3: conn 5 inactivity deadline +1.000000001s fired at +2.005s, 5ms after the full scan's pass at +2s: more than 2 budget continuations",
		"TW-4: thread 3: conn 6 inactivity deadline +1.000000001s fired at +2.0012s, 1.2ms after the full scan's pass at +2s: not a whole number of 1ms continuations",
		"TW-10: thread 3: conn 7 evicted at +3.001s; the full scan evicted it at +3s",
		"TW-10: thread 3: the wheel cop evicted 3 connections, the full scan 3; they part at eviction 2 (wheel 9, full scan 8)",
		"TW-10: thread 3: conn 9 inactivity deadline +3s fired at +4s, after its eviction at +3.002s",
	} {
		assert.Contains(t, msgs, want)
	}
	assert.Subset(t, claimsOf(&vs), []string{"TW-2", "TW-4", "TW-10"})
}

// CheckCopMetrics compares the registered counters with the history and
// fails on a missing name, a wrong value and a continuation the counter
// missed.
func TestCheckCopMetrics(t *testing.T) {
	names := checks.CopMetricNames{Passes: "p", Visited: "v", Fired: "f", PassTimeUS: "pt", PassMaxUS: "pm", BudgetExhausted: "e",
		Lookups: "l", Evicted: "x", AuditLost: "al", AuditLate: "at"}
	ok := map[string]int64{"p": 12, "v": 7, "f": 2, "pt": 0, "pm": 0, "e": 2, "l": 7, "x": 1, "al": 0, "at": 0}
	h := checks.CopHistory{Thread: 0, RefPasses: 10, Audited: true, Metrics: ok,
		Wheel: checks.WheelCounts{Passes: 12, Visited: 7, Fired: 2, Rearmed: 4, Dropped: 1, Exhausted: 2},
		Fired: []checks.TimeoutEvent{inact(1, sec, 2*sec), inact(2, sec, 2*sec+checks.Instant(time.Millisecond)), evict(3, 2*sec+5)},
		Ref:   []checks.TimeoutEvent{inact(1, sec, 2*sec), inact(2, sec, 2*sec), evict(3, 2*sec+5)}}
	var vs checks.Violations
	checks.CheckCopMetrics(h, names, &vs)
	assert.Empty(t, vs.Of())

	for name, want := range map[string]string{
		"p":  "TW-8: thread 0: p is 13; the harness counts 10 passes",
		"v":  "TW-8: thread 0: v is 8, the wheel re-read 7",
		"f":  "TW-8: thread 0: f is 3, the callback saw 2 timeouts",
		"pt": "TW-8: thread 0: pt is 1: under the simulator",
		"x":  "TW-10: thread 0: x is 2, the callback saw 1 evictions",
		"al": "TW-7: thread 0: the audit found 1 lost and 0 late",
	} {
		bad := map[string]int64{}
		for k, v := range ok { //windtunnel:unordered copying
			bad[k] = v
		}
		bad[name]++
		var vs checks.Violations
		h.Metrics = bad
		checks.CheckCopMetrics(h, names, &vs)
		require.NotEmpty(t, vs.Of(), name)
		assert.Contains(t, vs.Of()[0].String(), want)
	}
	h.Metrics = ok
	for field, want := range map[string]string{
		"Passes":    "TW-8: thread 0: the wheel counts 13 passes; the harness counts 10 passes",
		"Visited":   "TW-8: thread 0: v is 7, the wheel re-read 8",
		"Fired":     "TW-8: thread 0: the wheel counts 3 fired, the callback saw timeouts of 2 connections at their instants",
		"Rearmed":   "TW-8: thread 0: the wheel counts 7 visited but 2 fired, 5 re-armed and 1 dropped",
		"Dropped":   "TW-8: thread 0: the wheel counts 7 visited but 2 fired, 4 re-armed and 2 dropped",
		"Exhausted": "TW-8: thread 0: the wheel counts 3 exhausted passes, e is 2",
	} {
		bad := h
		f := reflect.ValueOf(&bad.Wheel).Elem().FieldByName(field)
		f.SetInt(f.Int() + 1)
		var vs checks.Violations
		checks.CheckCopMetrics(bad, names, &vs)
		assert.ErrorContains(t, vs.Err(), want, field)
	}
	delete(ok, "f")
	vs = checks.Violations{}
	checks.CheckCopMetrics(h, names, &vs)
	assert.ErrorContains(t, vs.Err(), "TW-8: thread 0: the cop registered no series f")
	ok["f"], ok["e"] = 2, 0
	ok["p"] = 10
	vs = checks.Violations{}
	checks.CheckCopMetrics(h, names, &vs)
	assert.ErrorContains(t, vs.Err(), "the callbacks came from 1 continuation passes, e is 0")
}

func TestCatchUpCheckAndGrouping(t *testing.T) {
	assert.Error(t, checks.CatchUp{Thread: 1, PauseTicks: 100, Ring: 16, Examined: 100, Passes: 1}.Check(), "TW-5: no fast-forward")
	assert.NoError(t, checks.CatchUp{Thread: 1, PauseTicks: 100, Ring: 16, Examined: 16, Passes: 3}.Check())
	assert.NoError(t, checks.CatchUp{Thread: 1, PauseTicks: 5, Ring: 16, Examined: 5, Passes: 1}.Check())
	assert.NoError(t, checks.CatchUp{Thread: 1, PauseTicks: 5, Ring: 16, Examined: 5, Passes: 1, Visited: 3, Armed: 7}.Check(), "a partial catch-up visits some")
	assert.ErrorContains(t, checks.CatchUp{Thread: 1, PauseTicks: 5, Ring: 16, Examined: 5, Passes: 1, Visited: 8, Armed: 7}.Check(), "visited twice")
	assert.ErrorContains(t, checks.CatchUp{Thread: 1, PauseTicks: 40, Ring: 16, Examined: 16, Passes: 1, Visited: 6, Armed: 7}.Check(), "visited 6 of the 7")
	assert.NoError(t, checks.CatchUp{Thread: 1, PauseTicks: 40, Ring: 16, Examined: 16, Passes: 1, Visited: 7, Armed: 7}.Check())
	assert.NoError(t, checks.CatchUp{Thread: 1, PauseTicks: 40, Ring: 16, Examined: 16, Passes: 2, Visited: 9, Armed: 7}.Check(), "continuations may revisit")
	g := checks.GroupByInstant([]checks.TimeoutEvent{inact(1, 0, sec), inact(2, 0, sec), inact(3, 0, 2*sec)})
	assert.Equal(t, []checks.FiredPass{{At: sec, Conns: []uint64{1, 2}}, {At: 2 * sec, Conns: []uint64{3}}}, g)
}

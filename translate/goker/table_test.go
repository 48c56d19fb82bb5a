package goker

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A seed counts toward the rate only when its run proved the leak; a run
// cut off while tasks still ran, or one that hit a limit, is counted apart.
func TestClassifyCountsOnlyProvedLeaks(t *testing.T) {
	r := classify("K", "random", []string{"0x1", "0x2", "0x3", "0x4", "0x5"}, []string{
		"",
		"leak at step 20: 1 task(s) still blocked when the settle phase was cut off (possible goroutine leak)",
		"limit: 5000000 steps",
		"leak at step 9: 2 task(s) blocked forever after main returned (goroutine leak)",
		"deadlock at step 4: every task is blocked",
	})
	assert.Equal(t, Rate{Kernel: "K", Strategy: "random", Seeds: 5, Leaks: 2, Leaked: 2, Uncounted: 1, Possible: 1, Limits: 1, First: 4, Seed: "0x4",
		Message: "leak at step 9: 2 task(s) blocked forever after main returned (goroutine leak)",
		Other:   "leak at step 20: 1 task(s) still blocked when the settle phase was cut off (possible goroutine leak)"}, r)
}

func TestVerdictsCompareRatesAndFirstFinds(t *testing.T) {
	strats := []string{"random", "pct"}
	row := Row{Kernel: Kernel{Name: "K", Published: "19/100"}, Rates: map[string]Rate{
		"random": {Strategy: "random", Seeds: 20, Leaks: 5, First: 3, Seed: "0xa"},
		"pct":    {Strategy: "pct", Seeds: 10, Leaks: 3, First: 2, Seed: "0xb"},
	}, Real: &Real{Runs: 20, Leaks: 6, First: 4}}
	best, ok := row.Best(strats)
	assert.True(t, ok)
	assert.Equal(t, "pct", best.Strategy, "3/10 beats 5/20")
	atLeast, known := row.AtLeastReal(strats)
	assert.True(t, known)
	assert.True(t, atLeast, "3/10 >= 6/20")
	row.Real.Leaks = 7
	atLeast, _ = row.AtLeastReal(strats)
	assert.False(t, atLeast, "3/10 < 7/20")
	wt, real, ok := row.FirstFinds(strats)
	assert.Equal(t, []any{2, 4, true}, []any{wt, real, ok})
	row.Real = &Real{Runs: 20}
	wt, real, ok = row.FirstFinds(strats)
	assert.Equal(t, []any{2, 21, true}, []any{wt, real, ok}, "a real runtime that never showed it needed more than its runs")
	assert.True(t, row.Kernel.Flaky())
	assert.False(t, Kernel{Published: "100/100"}.Flaky())
	assert.False(t, Kernel{}.Flaky())

	none := Row{Kernel: Kernel{Name: "N"}, Rates: map[string]Rate{"random": {Seeds: 20}}, Real: &Real{Runs: 20, Leaks: 1, First: 9}}
	_, ok = none.Best(strats)
	assert.False(t, ok)
	atLeast, known = none.AtLeastReal(strats)
	assert.True(t, known)
	assert.False(t, atLeast, "0/20 < 1/20")
	text := Table(strats, []Row{row, none})
	assert.Contains(t, text, "| K | yes | yes | 5/20 (1st: 3) | 3/10 (1st: 2) | 0/20 | 19/100 | yes | yes: 2 vs > 20 |")
	assert.Contains(t, text, "below it: N")
	assert.True(t, strings.Contains(text, "2 kernels, 2 translated, 1 found"), text)
}

// A kernel flown with another budget than the default is replayed with it:
// its replay command carries GOKER_STEPS and GOKER_SETTLE.
func TestReplayCommandCarriesTheBudget(t *testing.T) {
	row := Row{Kernel: Kernel{Name: "K"}, Rates: map[string]Rate{"pct": {Strategy: "pct", Seeds: 2, Leaks: 2, First: 1, Seed: "0xb"}}}
	assert.Contains(t, Table([]string{"pct"}, []Row{row}), "`make goker-replay KERNEL=K SEED=0xb STRATEGY=pct`")
	t.Setenv("GOKER_STEPS", "2000000000")
	t.Setenv("GOKER_SETTLE", "1h")
	assert.Contains(t, Table([]string{"pct"}, []Row{row}), "`make goker-replay KERNEL=K SEED=0xb STRATEGY=pct GOKER_STEPS=2000000000 GOKER_SETTLE=1h`")
	t.Setenv("GOKER_STEPS", "5000000")
	t.Setenv("GOKER_SETTLE", "1s")
	assert.Contains(t, Table([]string{"pct"}, []Row{row}), "`make goker-replay KERNEL=K SEED=0xb STRATEGY=pct`", "the defaults, as make passes them, add nothing")
}

// Where both sides find a flaky kernel on their first run, the table
// compares the goroutines each leaves leaked per run, with the strategy
// that left the most.
func TestTiesCompareLeakedGoroutinesPerRun(t *testing.T) {
	strats := []string{"random", "goorder"}
	row := Row{Kernel: Kernel{Name: "K", Published: "1/100"}, Rates: map[string]Rate{
		"random":  {Strategy: "random", Seeds: 20, Leaks: 20, Leaked: 1000, First: 1, Seed: "0xa"},
		"goorder": {Strategy: "goorder", Seeds: 20, Leaks: 20, Leaked: 3000, First: 1, Seed: "0xb"},
	}, Real: &Real{Runs: 20, Leaks: 20, First: 1, Leaked: 2000}}
	wt, real, st, cmp, ok := row.LeakedPerRun(strats)
	assert.Equal(t, []any{150.0, 100.0, "goorder", 1, true}, []any{wt, real, st, cmp, ok})
	row.Real.Leaked = 3000
	_, _, _, cmp, _ = row.LeakedPerRun(strats)
	assert.Zero(t, cmp, "3000/20 against 3000/20")
	row.Real.Leaked = 3001
	_, _, _, cmp, _ = row.LeakedPerRun(strats)
	assert.Equal(t, -1, cmp, "150 against 150.05")
	text := Table(strats, []Row{row})
	assert.Contains(t, text, "| tie: 1 vs 1; leaked per run 150 (goorder) vs 150.1 |")
	assert.Contains(t, text, "more goroutines leaked per run than the real runtime in 0, as many in 0, fewer in 1")
	_, _, _, _, ok = Row{Rates: row.Rates}.LeakedPerRun(strats)
	assert.False(t, ok, "no real runs, no comparison")

	// A deadlock names no count: a strategy with one has no average, and
	// with none left there is no comparison rather than a 0.
	dead := classify("K", "random", []string{"0x1", "0x2"}, []string{
		"leak at step 9: 2 task(s) blocked forever after main returned (goroutine leak)",
		"deadlock at step 4: every task is blocked",
	})
	assert.Equal(t, []int{2, 2, 1}, []int{dead.Leaks, dead.Leaked, dead.Uncounted})
	_, _, _, _, ok = Row{Rates: map[string]Rate{"random": dead}, Real: row.Real}.LeakedPerRun([]string{"random"})
	assert.False(t, ok)
}

// The real runtime's count is of goroutine headers the leak profile marks
// leaked, not of every mention of the word.
func TestRealCountsLeakedGoroutineHeaders(t *testing.T) {
	out := "goroutine profile: total 3\n" +
		"goroutine 21 [sync.RWMutex.RLock (leaked)]:\nsync.(*RWMutex).RLock(...)\n\n" +
		"goroutine 22 [chan receive (leaked), 2 minutes]:\nmain.f()\n\n" +
		"goroutine 1 [running]:\nmain.main()\n\t// not (leaked)\n"
	assert.Len(t, leakedGoroutineRE.FindAllStringIndex(out, -1), 2)
}

// A shrink's error keeps to its first line in the table: the rest (the end
// of the shrink's output) would break the row.
func TestShrinkErrorKeepsToOneLine(t *testing.T) {
	row := Row{Kernel: Kernel{Name: "K"}, Rates: map[string]Rate{"random": {Strategy: "random", Seeds: 1, Leaks: 1, First: 1, Seed: "0x1"}},
		ShrinkErr: "goker: the shrink left 0 summaries; the end of its output:\nsignal: killed"}
	text := Table([]string{"random"}, []Row{row})
	assert.Contains(t, text, "| not shrunk: goker: the shrink left 0 summaries; the end of its output: | `make goker-replay")
	assert.NotContains(t, text, "signal: killed")
}

// A kernel found only by its longer flight counts as found, says at which
// budget in its cells and the summary, is judged by the longer rate, and
// is replayed with that budget.
func TestALongerFlightCountsWithItsBudget(t *testing.T) {
	strats := []string{"random", "pct"}
	long := Budget{Steps: 2_000_000_000, Settle: time.Hour}
	row := Row{Kernel: Kernel{Name: "K", Published: "53/100"}, Rates: map[string]Rate{
		"random": {Strategy: "random", Seeds: 20},
		"pct":    {Strategy: "pct", Seeds: 20, Limits: 19, Other: "limit at step 5000000: step limit of 5000000 exceeded"},
	}, Real: &Real{Runs: 20, Leaks: 20, First: 1, Leaked: 20000}}
	_, found := row.Best(strats)
	assert.False(t, found)
	row.Long = map[string]Rate{"pct": {Strategy: "pct", Seeds: 20, Leaks: 20, Leaked: 30000, First: 1, Seed: "0xb", Budget: long}}
	best, found := row.Best(strats)
	assert.True(t, found)
	assert.Equal(t, long, best.Budget)
	atLeast, known := row.AtLeastReal(strats)
	assert.Equal(t, []bool{true, true}, []bool{atLeast, known}, "20/20 at the larger budget against 20/20")
	text := Table(strats, []Row{row})
	assert.Contains(t, text, "| K | yes | yes, at 2000000000 steps, 1h0m0s settling | 0/20 | 0/20 + 19 limit; at 2000000000 steps, 1h0m0s settling: 20/20 (1st: 1) |")
	assert.Contains(t, text, "`make goker-replay KERNEL=K SEED=0xb STRATEGY=pct GOKER_STEPS=2000000000 GOKER_SETTLE=1h0m0s`")
	assert.Contains(t, text, "| tie: 1 vs 1; leaked per run 1500 (pct) vs 1000 |", "the longer flight's leaks are compared")
	assert.Contains(t, text, "1 found (a proved leak under some strategy); only with the larger budget: K.")
	assert.Equal(t, "at the default budget", Budget{}.String())
}

// A budget's bounds reach the harness binary as the variables it reads,
// after the environment's, so they win.
func TestBudgetSetsTheHarnessEnvironment(t *testing.T) {
	t.Setenv("GOKER_STEPS", "5000000")
	env := Budget{Steps: 7, Settle: time.Minute}.env()
	assert.Equal(t, []string{"GOKER_STEPS=7", "GOKER_SETTLE=1m0s"}, env[len(env)-2:])
	env = Budget{}.env()
	assert.NotContains(t, env[len(env)-1], "GOKER_")
}

// Only a kernel no strategy found is flown again, and only by the
// strategies the budget stopped: not one whose runs ended cleanly or that
// the wall cut off.
func TestLongerFlightsAreForWhatTheBudgetStopped(t *testing.T) {
	strats := []string{"random", "pct", "pos", "goorder"}
	row := Row{Kernel: Kernel{Name: "K"}, Rates: map[string]Rate{
		"random":  {Strategy: "random", Seeds: 20},
		"pct":     {Strategy: "pct", Seeds: 20, Limits: 19},
		"pos":     {Strategy: "pos", CutOff: true},
		"goorder": {Strategy: "goorder", Seeds: 20, Possible: 19},
	}}
	assert.Equal(t, []string{"pct", "goorder"}, row.LongerFlights(strats))
	row.Rates["random"] = Rate{Strategy: "random", Seeds: 20, Leaks: 1, First: 3}
	assert.Empty(t, row.LongerFlights(strats), "found within the budget")
}

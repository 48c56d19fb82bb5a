// Package shrink reduces a failing run to a small one that fails the same
// way: fewer client operations, fewer injected faults, fewer preemptions,
// fewer steps. It edits the two things a run is made of, apart:
//
//   - The world's choice list (protocol.Options.Choices). It holds the
//     workload and the fault plan as data, the way rapid and Hypothesis
//     shrink.
//   - The schedule's decision list (protocol.Guided). Cut it short and the
//     rest runs without preempting. Undo one preemption and the rest is
//     followed where it still applies.
//
// Every candidate is a full deterministic re-run. It is kept only if it
// fails with the same signature (the same claim, the same kind of
// violation), so the result is a real reproduction. Attempts are bounded
// by count, so the same failing run always shrinks to the same result; the
// wall-time limit is a safety net whose use the outcome reports.
//
// The order follows the issue a person debugs:
//
//  1. A probe of the smallest draws: five re-runs, kept only if the world
//     got smaller in operations.
//  2. The operations, since the workload is most of a failing run. When no
//     cut of the run's end keeps the failure, the tasks' whole workloads.
//  3. The faults.
//  4. The schedule, toward the small bug depth PCT and CHESS say most bugs
//     have.
//  5. The values the world drew.
//  6. The operations and the schedule once more. A smaller draw can make
//     an operation droppable (the seventeenth connection becoming the
//     first), and can bring a preemption back.
//
// The schedule comes before the draws so that a shrink of a heavy
// world that runs out of wall time has spent it on what a reader counts
// (operations and preemptions) rather than on tens of thousands of drawn
// values. A shrink that runs out of attempts above the goal (MeetsGoal)
// may run the passes once more, without the draws pass (MoreAttempts);
// one that is bare (at most one operation, no fault, no preemption) ends.
package shrink

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// Runner runs the test body once under cfg and returns the result and the
// failure text ("" for a pass). It must be deterministic: the same config,
// the same run.
type Runner func(cfg sim.Config) (sim.Result, string)

// Options bound a shrink.
type Options struct {
	// MaxAttempts bounds the re-runs (0: DefaultMaxAttempts).
	MaxAttempts int
	// MaxWall stops the shrink after this much wall time (0:
	// DefaultMaxWall). Stopping early keeps what was found so far and is
	// reported in Outcome.Stopped: the result then depends on the machine.
	MaxWall time.Duration
	// Strategy makes a fresh strategy for the choice passes: the failing
	// run's own (a random walk, PCT), so that editing the workload keeps
	// the schedule's stream. nil: sim.RandomWalk.
	Strategy func() sim.Strategy
	// MoreAttempts, when positive, runs the passes once more, with up to
	// this many more re-runs, when MaxAttempts ran out on a result larger
	// than the goal (MeetsGoal). Most failing runs shrink to the goal well
	// within MaxAttempts. The few that need more (a timing race in a swarm
	// of forty clients, whose every drop moves the pool's queue) get it
	// without every shrink paying for it.
	MoreAttempts int
	// Progress, if set, receives a line per accepted step.
	Progress func(line string)
	// Control, if set, runs a config on the code without the fault under
	// test (a mutant's unmutated code: faultswitch). A smaller run is then
	// kept only if Control passes it too, with the same choices and Keep
	// answers and the run's own decisions followed where they fit. A run
	// that fails without the fault as well is a counterexample of the edit,
	// not of the fault: a check still expecting an operation the edit
	// dropped, a bound the shorter run no longer reaches. The starting run
	// must pass it too. Each control run counts as a re-run.
	Control Runner
}

// The goal a shrunk counterexample should meet (issue 13): at most this
// many client operations and preemptions.
const (
	GoalOperations  = 10
	GoalPreemptions = 3
)

// bare reports whether a run has nothing left a reader counts: at most
// one operation, no fault, no preemption. Shrinking it further could only
// make its drawn values and its steps fewer, at a full re-run each. For
// heavy worlds (MS-4's runs set up 16,384 IDs) that is most of a shrink.
func (a Stats) bare() bool { return a.Operations <= 1 && a.Faults == 0 && a.Preemptions == 0 }

// MeetsGoal reports whether a run is as small as the goal asks.
func (a Stats) MeetsGoal() bool {
	return a.Operations <= GoalOperations && a.Preemptions <= GoalPreemptions
}

// Defaults for Options.
const (
	DefaultMaxAttempts = 600
	DefaultMaxWall     = 3 * time.Minute
)

// Stats measures a run's size.
type Stats struct {
	Operations  int64 `json:"operations"` // client operations begun (sim.Sim.OpBegin)
	Faults      int64 `json:"faults"`     // injected faults kept (sim.KeepFault)
	Preemptions int64 `json:"preemptions"`
	Steps       int64 `json:"steps"`
	Tasks       int   `json:"tasks"`
	Choices     int   `json:"choices"` // world choices drawn
}

func statsOf(r sim.Result) Stats {
	rc := recorded(&r)
	return Stats{Operations: r.Operations, Faults: rc.Kept.Faults, Preemptions: r.Preemptions,
		Steps: r.Steps, Tasks: r.Tasks, Choices: len(rc.Choices)}
}

// smaller orders runs by what a person has to read: operations, then
// faults, then preemptions, then steps, then choices.
func (a Stats) smaller(b Stats) bool {
	ka := [...]int64{a.Operations, a.Faults, a.Preemptions, a.Steps, int64(a.Choices)}
	kb := [...]int64{b.Operations, b.Faults, b.Preemptions, b.Steps, int64(b.Choices)}
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}

func (a Stats) String() string {
	return fmt.Sprintf("%d operations, %d faults, %d preemptions, %d steps, %d tasks",
		a.Operations, a.Faults, a.Preemptions, a.Steps, a.Tasks)
}

// Outcome is a finished shrink.
type Outcome struct {
	// Choices, Keeps and Decisions are the shrunk run: replay it with the
	// seed's settings, protocol.Options{ReplayChoices: true, Choices:
	// Choices, Keeps: Keeps} and Strategy: sim.Replay(Decisions).
	Choices   []uint64
	Keeps     protocol.Keeps
	Decisions []int32
	Result    sim.Result // the shrunk run, replayed strictly
	Failure   string     // its failure text
	Signature string     // what every accepted run failed with

	Before, After Stats
	Attempts      int // re-runs made, control runs included
	Accepted      int // re-runs that shrank the run
	// Controlled says the code without the fault passes the shrunk run
	// (Options.Control was set); ControlRuns counts the control runs made,
	// Refused the smaller failing runs refused because the code without
	// the fault failed them too.
	Controlled           bool
	ControlRuns, Refused int
	Wall                 time.Duration
	// Stopped says why the shrink ended before trying every edit: "" when
	// it did not, else the attempt or wall-time limit.
	Stopped string
}

// Removed sums up what the shrink took away, for a failure block.
func (o Outcome) Removed() string {
	return fmt.Sprintf("operations %d -> %d, faults %d -> %d, preemptions %d -> %d, steps %d -> %d, tasks %d -> %d",
		o.Before.Operations, o.After.Operations, o.Before.Faults, o.After.Faults,
		o.Before.Preemptions, o.After.Preemptions, o.Before.Steps, o.After.Steps, o.Before.Tasks, o.After.Tasks)
}

var numbers = regexp.MustCompile(`[0-9]`)

// Signature is what a shrunk run must still fail with. For a claim check
// ("check: OC-2: grant-staleness 1.2s breaks < 1s: read #5 …") it is the
// claim and the words before the first figure ("check: OC-2:
// grant-staleness"). For the simulator's own failures (a panic, a
// deadlock, a limit) it is their kind and the words before the first
// figure of the message. Figures,
// keys and task names change as a run shrinks; the claim and the kind of
// violation must not.
func Signature(failure string) string {
	first, _, _ := strings.Cut(failure, "\n")
	if rest, ok := strings.CutPrefix(first, "check: "); ok {
		claim, text, _ := strings.Cut(rest, ": ")
		if loc := numbers.FindStringIndex(text); loc != nil {
			text = text[:loc[0]]
		}
		return strings.TrimSpace("check: " + claim + ": " + strings.TrimRight(text, " #(+-["))
	}
	// "panic at step 812, +1.5s: task "client3" panicked: …"
	kind, rest, _ := strings.Cut(first, " at step ")
	_, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return kind
	}
	// Task names carry numbers: keep the message from after the task.
	if i := strings.Index(msg, "panicked: "); i >= 0 {
		msg = msg[i:]
	}
	// A message that opens with a count ("2 task(s) blocked forever")
	// keeps the words after it, which say what kind of failure it is.
	msg = strings.TrimSpace(strings.TrimLeft(msg, "0123456789"))
	if loc := numbers.FindStringIndex(msg); loc != nil {
		msg = msg[:loc[0]]
	}
	return strings.TrimSpace(kind + ": " + strings.TrimRight(msg, " #(+-[\""))
}

// shrinker is one shrink in progress.
type shrinker struct {
	run      Runner
	base     sim.Config
	opt      Options
	sig      string
	start    time.Time
	attempts int
	accepted int
	controls int // control runs (Options.Control), counted in attempts too
	refused  int // smaller failing runs the control failed as well
	stopped  string
	limit    int  // the attempt count the shrink stops at (MaxAttempts, then MoreAttempts more)
	more     bool // the passes ran again (MoreAttempts)
	fewerOps bool // accept only a run with fewer operations (probeDraws)
	pass     string
	passEnd  int      // the attempt count the current pass stops at
	cut      []string // the passes that hit their share

	// The best run so far: its choices, Keep answers, decisions and result.
	choices   []uint64
	keeps     protocol.Keeps
	decisions []int32
	res       sim.Result
	failure   string
	guided    bool // best came from a guided schedule
}

// ErrNotReplayed is the error of a shrink whose runs do not replay: the
// seed's re-run does not fail as the seed did, or the shrunk run's strict
// replay does not fail as the run did. The simulator promises that a run is
// a function of its seed, choices, Keep answers and decisions, so either
// is a determinism bug, in the simulator or in the test, never a property
// of the run.
var ErrNotReplayed = errors.New("a run does not replay")

// ErrControlFails is the error of a shrink whose starting run fails on the
// code without the fault under test too (Options.Control): the run is no
// counterexample of the fault, and its check does not tell the two apart.
var ErrControlFails = errors.New("the run fails without the fault under test too")

// Shrink shrinks the failing run base, which failed with failure. base is
// the run's config (its seed and settings); Shrink sets the choice and
// decision recording and the strategy itself. It returns an error when the
// failure does not reproduce or cannot be shrunk at all (it is not a
// simulated run's failure).
func Shrink(run Runner, base sim.Config, failure string, opt Options) (Outcome, error) {
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = DefaultMaxAttempts
	}
	if opt.MaxWall <= 0 {
		opt.MaxWall = DefaultMaxWall
	}
	if opt.Strategy == nil {
		opt.Strategy = sim.RandomWalk
	}
	sh := &shrinker{run: run, base: base, opt: opt, sig: Signature(failure), start: time.Now()}
	if strings.HasPrefix(failure, "determinism:") || strings.HasPrefix(failure, "replay ") {
		return Outcome{}, fmt.Errorf("a %s failure is about the harness, not the run: nothing to shrink", sh.sig)
	}
	// The failing run itself, recorded: the seed's, or the given choices.
	bo := protocol.ConfigOf(&base)
	cfg := sh.config(bo.Choices, bo.Keeps, bo.ReplayChoices, opt.Strategy())
	res, got := sh.runRaw(cfg)
	if Signature(got) != sh.sig {
		return Outcome{}, fmt.Errorf("%w: the failure does not reproduce: the seed's re-run %s, want %q", ErrNotReplayed, describe(got), sh.sig)
	}
	if rc := recorded(&res); rc.ChoicesCut {
		return Outcome{}, fmt.Errorf("the run drew more than %d world choices: too long to shrink (lower its size)", len(rc.Choices))
	}
	if ok, said := sh.controlPasses(res); !ok {
		return Outcome{}, fmt.Errorf("%w (%s): its check does not tell the fault from the code without it", ErrControlFails, said)
	}
	sh.adopt(res, got, false)
	before := statsOf(res)
	sh.progress("start: %s (%d choices); keeping %q", before, len(recorded(&res).Choices), sh.sig)

	// Each pass may use the attempts left up to its share, so that a long
	// pass (a thousand operations dropped one at a time) cannot starve the
	// schedule's. The operations pass runs again after the schedule and the
	// draws have shrunk: a smaller draw (the first connection, not the
	// seventeenth) can make operations droppable that were not before, and
	// the result should be 1-minimal in its operations.
	ops := func() {
		if !sh.keepNamed(sim.KeepOperation, false) {
			sh.keepNamed(sim.KeepOperation, true)
		}
		if !sh.truncateAt(sim.KeepOperation) {
			sh.dropTasks(sim.KeepOperation)
		}
		sh.dropSites(sim.KeepOperation)
	}
	type pass struct {
		name  string
		share float64 // of the round's attempts, cumulative
		run   func()
		// towardOps: the pass is there to let fewer operations fail (a
		// smaller world, and the operations dropped once more in it). With
		// at most one operation left it has nothing to work toward. In
		// heavy runs (MS-8's) it could then spend the shrink's whole wall
		// time on draws no reader counts.
		towardOps bool
	}
	faults := func() { sh.dropAll(sim.KeepFault); sh.truncateAt(sim.KeepFault); sh.dropSites(sim.KeepFault) }
	// The run without any operation first: one re-run, cheap when it
	// passes (its workload loops end at once). When it fails, as a wrong
	// setup does, it is the whole operations pass in one re-run. A pass
	// that visits every bucket with or without activity
	// (tw3-scan-all-buckets) otherwise takes the draw probe and the
	// halving to get there.
	none := func() { sh.dropAll(sim.KeepOperation) }
	passes := []pass{
		{"no operations", 0.01, none, false},
		{"draws", 0.04, sh.probeDraws, true},
		{"operations", 0.40, ops, false},
		{"faults", 0.48, faults, false},
		{"schedule", 0.62, sh.shrinkSchedule, false},
		{"draws", 0.72, sh.minimizeDraws, true},
		{"operations again", 0.86, ops, true},
		{"schedule", 0.97, sh.shrinkSchedule, false},
	}
	// The round MoreAttempts adds works toward the goal, which counts
	// operations and preemptions: it leaves out the draws pass, which in
	// the runs that get there (timing races in a swarm) used its whole
	// share and kept nothing.
	more := []pass{
		{"draws", 0.03, sh.probeDraws, true},
		{"operations", 0.45, ops, false},
		{"faults", 0.52, faults, false},
		{"schedule", 0.65, sh.shrinkSchedule, false},
		{"operations again", 0.90, ops, true},
		{"schedule", 1, sh.shrinkSchedule, false},
	}
	sh.limit = opt.MaxAttempts
	var spent []string // per pass run: accepted/attempts, for the done line
	for round := 0; ; round++ {
		from := sh.attempts
		if round > 0 {
			sh.limit, sh.more, passes = sh.attempts+opt.MoreAttempts, true, more
			sh.progress("more: %s is above the goal (%d operations, %d preemptions): the passes again, with up to %d more re-runs",
				statsOf(sh.res), GoalOperations, GoalPreemptions, opt.MoreAttempts)
		}
		for _, p := range passes {
			if statsOf(sh.res).bare() {
				sh.progress("done: %s is as small as a reader counts (at most one operation, no fault, no preemption); the passes left could only make its draws smaller", statsOf(sh.res))
				break
			}
			if p.towardOps && statsOf(sh.res).Operations <= 1 {
				sh.progress("skip: the %s pass: %s has at most one operation, none left for it to make droppable", p.name, statsOf(sh.res))
				continue
			}
			sh.pass, sh.passEnd = p.name, from+max(int(p.share*float64(sh.limit-from)), 1)
			before, accepted := sh.attempts, sh.accepted
			p.run()
			spent = append(spent, fmt.Sprintf("%s %d/%d", p.name, sh.accepted-accepted, sh.attempts-before))
		}
		if round > 0 || opt.MoreAttempts <= 0 || statsOf(sh.res).MeetsGoal() || len(sh.cut) == 0 ||
			(sh.stopped != "" && !strings.HasPrefix(sh.stopped, "attempt limit")) {
			break
		}
		// Out of attempts above the goal: one more round.
		sh.stopped, sh.cut = "", nil
	}
	if sh.stopped == "" && len(sh.cut) > 0 {
		sh.stopped = fmt.Sprintf("attempt limit (%s): the %s pass(es) used their share", sh.limitText(), strings.Join(sh.cut, ", "))
	}

	// The result, re-checked by a strict replay of its own recording.
	final := sh.base
	fo := protocol.ConfigOf(&final)
	fo.ReplayChoices, fo.Choices, fo.Keeps = true, sh.choices, sh.keeps
	final.Strategy = sim.Replay(sh.decisions)
	final.RecordDecisions, fo.RecordChoices = true, true
	fres, ffail := sh.runRaw(final)
	if Signature(ffail) != sh.sig {
		return Outcome{}, fmt.Errorf("%w: the shrunk run does not replay its failure: it %s, want %q (a nondeterministic test?)", ErrNotReplayed, describe(ffail), sh.sig)
	}
	out := Outcome{Choices: sh.choices, Keeps: sh.keeps, Decisions: sh.decisions, Result: fres, Failure: ffail, Signature: sh.sig,
		Before: before, After: statsOf(fres), Attempts: sh.attempts, Accepted: sh.accepted,
		Controlled: sh.opt.Control != nil, ControlRuns: sh.controls, Refused: sh.refused,
		Wall: time.Since(sh.start), Stopped: sh.stopped}
	sh.progress("done: %s in %d attempts (%d accepted), %v; accepted/attempts by pass: %s", out.After, out.Attempts, out.Accepted, out.Wall.Round(time.Millisecond), strings.Join(spent, ", "))
	return out, nil
}

func describe(failure string) string {
	if failure == "" {
		return "passed"
	}
	first, _, _ := strings.Cut(failure, "\n")
	if len(first) > 160 {
		first = first[:160] + "…"
	}
	return "failed with " + first
}

func (sh *shrinker) progress(format string, a ...any) {
	if sh.opt.Progress != nil {
		sh.opt.Progress(fmt.Sprintf("shrink: "+format, a...))
	}
}

// config is a candidate run: the given choices and Keep answers (when
// replay; else the seed's), a strategy, and recording on.
func (sh *shrinker) config(choices []uint64, keeps protocol.Keeps, replay bool, strategy sim.Strategy) sim.Config {
	cfg := sh.base
	cfg.Strategy = strategy
	o := protocol.ConfigOf(&cfg)
	o.RecordChoices, cfg.RecordDecisions = true, true
	o.ReplayChoices, o.Choices, o.Keeps = replay, nil, protocol.Keeps{}
	if replay {
		o.Choices, o.Keeps = choices, keeps
		if o.Choices == nil {
			o.Choices = []uint64{}
		}
	}
	cfg.Record, cfg.TraceOut = false, nil
	return cfg
}

func (sh *shrinker) runRaw(cfg sim.Config) (sim.Result, string) {
	sh.attempts++
	return sh.run(cfg)
}

// limitText names the attempt limit: "200", or "200 + 400 more" once
// the passes ran again.
func (sh *shrinker) limitText() string {
	if sh.more {
		return fmt.Sprintf("%d + %d more", sh.opt.MaxAttempts, sh.opt.MoreAttempts)
	}
	return fmt.Sprint(sh.opt.MaxAttempts)
}

// budget reports whether another attempt may be made.
func (sh *shrinker) budget() bool {
	if sh.stopped != "" {
		return false
	}
	if sh.attempts >= sh.passEnd {
		if len(sh.cut) == 0 || sh.cut[len(sh.cut)-1] != sh.pass {
			sh.cut = append(sh.cut, sh.pass)
		}
		return false
	}
	if sh.attempts >= sh.limit {
		sh.stopped = "attempt limit (" + sh.limitText() + ")"
		return false
	}
	if time.Since(sh.start) > sh.opt.MaxWall {
		sh.stopped = fmt.Sprintf("wall-time limit (%v)", sh.opt.MaxWall)
		return false
	}
	return true
}

// try runs a candidate and adopts it if it fails the same way and is
// smaller.
func (sh *shrinker) try(cfg sim.Config, guided bool, what string) bool {
	if !sh.budget() {
		return false
	}
	res, got := sh.runRaw(cfg)
	if Signature(got) != sh.sig || recorded(&res).ChoicesCut || !statsOf(res).smaller(statsOf(sh.res)) {
		return false
	}
	if sh.fewerOps && res.Operations >= sh.res.Operations {
		return false
	}
	if strings.Contains(got, sim.ErrDropped.Error()) {
		// The failure is about an operation the edit dropped: an artifact
		// of the candidate, whatever its signature.
		return false
	}
	if ok, _ := sh.controlPasses(res); !ok {
		sh.refused++
		return false
	}
	sh.adopt(res, got, guided)
	sh.accepted++
	sh.progress("%s: %s", what, statsOf(res))
	return true
}

// controlPasses runs res once more on the code without the fault under
// test (Options.Control), as the best run would be kept. It uses the run's
// recorded choices and Keep answers. It follows the run's own decisions
// where they fit, since the code without the fault may take other steps.
// It reports whether that code passes it, in either of two worlds, tried
// in turn:
//
//   - the run's own: every Keep call it did not ask answered false, as in
//     the run itself. The code without the fault meets exactly the world
//     the fault failed in. It goes on with every later operation dropped
//     (a run the size of the candidate).
//   - the seed's past the run's end (Keeps.Beyond). A check of a whole run
//     may fail, on any code, once its later operations are dropped (a
//     lookup it was built to make, never made). The code without the fault
//     then goes on as the seed would have, for the price of a full run.
//
// Without a Control every run passes. A control run is made even when the
// attempts have run out: the candidate it judges has run. said describes
// the last control run's failure.
func (sh *shrinker) controlPasses(res sim.Result) (ok bool, said string) {
	if sh.opt.Control == nil {
		return true, ""
	}
	rc := recorded(&res)
	keeps := protocol.KeepsOfRun(rc)
	for _, beyond := range []*protocol.Horizon{nil, rc.Horizon} {
		keeps.Beyond = beyond
		cfg := sh.config(rc.Choices, keeps, true, guided(res.Decisions))
		protocol.ConfigOf(&cfg).RecordChoices, cfg.RecordDecisions = false, false
		sh.controls++
		sh.attempts++
		_, got := sh.opt.Control(cfg)
		if got == "" {
			return true, ""
		}
		said = describe(got)
		if beyond == nil && rc.Horizon == nil {
			break // not recorded: no horizon to go past
		}
	}
	return false, said
}

func (sh *shrinker) adopt(res sim.Result, failure string, guided bool) {
	rc := recorded(&res)
	sh.choices, sh.keeps, sh.decisions, sh.res, sh.failure, sh.guided = rc.Choices, protocol.KeepsOfRun(rc), res.Decisions, res, failure, guided
}

// candidate runs edited choices and Keep answers. After the schedule pass
// has started the schedule is the best run's (guided); before, the
// strategy's.
func (sh *shrinker) candidate(choices []uint64, keeps protocol.Keeps, what string) bool {
	strategy := sh.opt.Strategy()
	if sh.guided {
		dec := sh.decisions
		if sh.res.Preemptions == 0 {
			// A best run that needs no preemption is edited without any:
			// its decision list, followed by a run whose operations moved,
			// would switch tasks wherever the list still fits (a dropped
			// operation once turned 0 preemptions into 22,233).
			dec = nil
		}
		strategy = guided(dec)
	}
	return sh.try(sh.config(choices, keeps, true, strategy), sh.guided, what)
}

// kept lists the ordinals of the kind's Keep decisions the best run kept.
func (sh *shrinker) kept(what sim.Keepable) []int {
	var out []int
	for _, k := range recorded(&sh.res).KeepSites {
		if k.What == what && k.Kept {
			out = append(out, k.Index)
		}
	}
	return out
}

// with returns the best run's Keep answers with the kind's list replaced.
func (sh *shrinker) with(what sim.Keepable, list []bool) protocol.Keeps {
	k := sh.keeps
	if what == sim.KeepFault {
		k.Faults = list
	} else {
		k.Operations = list
	}
	return k
}

// keepNamed keeps only the operations whose label the failure names (the
// key of the stale read, the connection whose timeout was missed). When
// the world labels its operations (sim.Sim.KeepFor), that is one re-run
// that drops most of a workload.
//
// coarse names a path label by its parent: "ms/k7/u5/p1" as "ms/k7/u5/*".
// A failure on ms/k7/u5/p2 then keeps every operation on u5's keys of k7,
// since the read that loaded the user's whole membership snapshot may have
// been of another channel. It is tried when the exact labels do not keep
// the failure. keepNamed says whether a run was adopted.
func (sh *shrinker) keepNamed(what sim.Keepable, coarse bool) bool {
	var list []bool
	named, dropped := 0, 0
	matches := map[string]bool{}
	for _, k := range recorded(&sh.res).KeepSites {
		if k.What != what {
			continue
		}
		// An unlabelled element (a drain, an open) is about everything:
		// it stays.
		m, seen := matches[k.Label]
		if !seen {
			label := k.Label
			if coarse {
				label = parentLabel(label)
			}
			m = k.Label == "" || (label != "" && Names(sh.failure, label))
			matches[k.Label] = m
		}
		keep := k.Kept && m
		if keep {
			named++
		} else if k.Kept {
			dropped++
		}
		list = append(list, keep)
	}
	if named == 0 || dropped == 0 {
		return false
	}
	how := "the failure names"
	if coarse {
		how = "whose parent key the failure names"
	}
	return sh.candidate(sh.choices, sh.with(what, list), fmt.Sprintf("%ss: kept the %d %s", what, named, how))
}

// parentLabel is a path label with its last segment made a wildcard
// ("ms/k7/u5/p1" -> "ms/k7/u5/*"). It is "" for a label of fewer than
// three segments or whose last segment is already one: its parent would
// name too much to be worth a run.
func parentLabel(label string) string {
	i := strings.LastIndexByte(label, '/')
	if i < 0 || strings.Count(label, "/") < 2 || label[i+1:] == "*" {
		return ""
	}
	return label[:i+1] + "*"
}

// Names reports whether a failure text names a label. The label must
// appear as a whole word, not inside a longer name: "conn 7" is not named
// by "conn 71". A "*" in it stands for one path segment: "oc/k1/*/o5" is
// named by "oc/k1/r3/o5".
func Names(failure, label string) bool {
	if len(label) < 2 {
		return false
	}
	parts := strings.Split(label, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(`(?:^|[^\w./-])` + strings.Join(parts, `[^\s/]+`) + `(?:$|[^\w/])`)
	return err == nil && re.MatchString(failure)
}

// dropTasks tries the run without all of one task's elements of the kind,
// task after task. It runs when no cut of the list's end kept the failure:
// the failure needs the run's last operations. Several tasks' operations
// may interleave up to there (a queue that overflows at its thread's last
// open, with another thread opening beside it). Then every chunk delta
// debugging drops holds some of the ones it needs, and only single drops
// are left, one re-run per operation. Choices are keyed by task, so
// the other tasks run as before.
func (sh *shrinker) dropTasks(what sim.Keepable) {
	var order []string
	seen := map[string]bool{}
	for _, k := range recorded(&sh.res).KeepSites {
		// By the task that asked: a fault asked inside one of its
		// operations (protocol.Inside) is keyed by the operation too.
		if owner := k.Key.Owner(); k.What == what && k.Kept && !seen[owner] {
			seen[owner] = true
			order = append(order, owner)
		}
	}
	if len(order) < 2 {
		return // dropping the only task's is dropping every one
	}
	for _, task := range order {
		if !sh.budget() {
			return
		}
		list := append([]bool(nil), sh.keeps.Of(what)...)
		n := 0
		for _, k := range recorded(&sh.res).KeepSites {
			if k.What == what && k.Kept && k.Key.Owner() == task && k.Index < len(list) {
				list[k.Index] = false
				n++
			}
		}
		if n > 0 {
			sh.candidate(sh.choices, sh.with(what, list), fmt.Sprintf("%ss: dropped the %d of task %q", what, n, task))
		}
	}
}

// dropAll tries the run without any element of the kind.
func (sh *shrinker) dropAll(what sim.Keepable) {
	if len(sh.kept(what)) > 0 {
		sh.candidate(sh.choices, sh.with(what, []bool{}), fmt.Sprintf("dropped every %s", what))
	}
}

// truncateAt cuts the kind's Keep list just before one of its kept
// decisions: every later one is dropped at once. It searches for the
// earliest cut that still fails by halving, and reports whether any did.
// Once a first cut has kept the failure, it tries the shortest cuts
// (keeping 0, 1, 2, 4 and 8: runs that short are cheap, their workload
// loops end early, Sim.KeepsLeft) before halving on.
//
// Why: a run whose failure needs only its first operations (TW-3's full
// scan visits the first connection opened as it does the
// hundred-thousandth) otherwise reaches them by halving. That is log2(n)
// accepted steps, each a full re-run and a control run. A run no cut
// keeps failing (the failure needs its last operations) pays nothing for
// it.
func (sh *shrinker) truncateAt(what sim.Keepable) (shortened bool) {
	kept := sh.kept(what)
	cut := func(n int) bool {
		list := append([]bool(nil), sh.keeps.Of(what)[:kept[n]]...)
		return sh.candidate(sh.choices, sh.with(what, list), fmt.Sprintf("%ss: kept the first %d of %d", what, n, len(kept)))
	}
	// The earliest cut that fails lies in [lo, hi]; hi (no cut) is known
	// to fail. A failing run is not monotone in its prefix, so this finds
	// a good cut, not always the shortest: a bisection, whose cuts below
	// lo are known to pass. An accepted cut keeps them known: it dropped
	// only later decisions, so a shorter cut of it is the very run
	// already tried. Searching [0, hi] afresh after each accepted cut would
	// re-run such cuts and spend the pass's share on them.
	lo, hi := 0, len(kept)
	probed := false
	for lo < hi && sh.budget() {
		mid := (lo + hi) / 2
		if !cut(mid) {
			lo = mid + 1
			continue
		}
		kept = sh.kept(what)
		hi = min(mid, len(kept))
		lo = min(lo, hi)
		shortened = true
		if probed {
			continue
		}
		probed = true
		for _, n := range []int{0, 1, 2, 4, 8} {
			if n >= hi || !sh.budget() {
				break
			}
			if cut(n) {
				return true
			}
			lo = n + 1
		}
	}
	return shortened
}

// dropSites is delta debugging over the kind's kept decisions: drop
// chunks of halving size, then one at a time.
func (sh *shrinker) dropSites(what sim.Keepable) {
	for chunk := max(len(sh.kept(what))/2, 1); ; chunk /= 2 {
		for i := 0; sh.budget(); {
			kept := sh.kept(what)
			if i >= len(kept) {
				break
			}
			list := append([]bool(nil), sh.keeps.Of(what)...)
			end := min(i+chunk, len(kept))
			for _, at := range kept[i:end] {
				if at < len(list) {
					list[at] = false
				}
			}
			if !sh.candidate(sh.choices, sh.with(what, list), fmt.Sprintf("dropped %d %s(s)", end-i, what)) {
				i += chunk
			}
		}
		if chunk <= 1 || !sh.budget() {
			break
		}
	}
}

// minimizeDraws sets blocks of the world's draws to their smallest value:
// shorter waits, the first key, the smallest sizes. It tries each quarter
// and then each sixteenth of the draws, at most 20 re-runs, and goes no
// finer. Each finer level costs four times the re-runs of the one before
// (64, 256, ... blocks), for what a reader does not count. It most often
// keeps none: a world whose every draw sets a timestamp its failure needs
// (DR's) rejects them all. TestTheDrawsPassTriesTheLargeBlocksOnly holds
// it to the large blocks.
func (sh *shrinker) minimizeDraws() {
	sh.smallestDraws(max(len(sh.choices)/4, 1), max(len(sh.choices)/16, 1))
}

// probeDraws tries, before any operation is dropped, every draw at its
// smallest and then each quarter of them: at most five re-runs. A world
// whose smallest draws make it small is small at once (TW-10's queue of 4
// instead of 2,048, whose every eviction needs the queue full). The
// operations pass then works on hundreds of operations instead of
// thousands. A world whose draws set its timing (MS's pauses and
// latencies) rejects the five and loses five re-runs.
//
// It accepts only a run with fewer operations. A smaller draw that only
// moves the timing (fewer faults, the same operations) would swap the run
// for another before the operations pass. That pass's drops in a timing
// race are a matter of luck either way.
func (sh *shrinker) probeDraws() {
	if sh.res.Operations == 0 {
		return // no run has fewer (MS-8's runs make none)
	}
	sh.fewerOps = true
	defer func() { sh.fewerOps = false }()
	sh.smallestDraws(len(sh.choices), max(len(sh.choices)/4, 1))
}

// smallestDraws sets chunks of the draws to their smallest value, from
// chunks of first draws down to chunks of last, quartering.
func (sh *shrinker) smallestDraws(first, last int) {
	for chunk := max(first, 1); sh.budget(); chunk = max(chunk/4, 1) {
		for i := 0; i < len(sh.choices) && sh.budget(); i += chunk {
			edited := append([]uint64(nil), sh.choices...)
			changed := false
			for j := i; j < min(i+chunk, len(edited)); j++ {
				if edited[j] > 1 {
					edited[j], changed = 1, true
				}
			}
			if changed {
				sh.candidate(edited, sh.keeps, fmt.Sprintf("smallest draws at %d..%d", i, min(i+chunk, len(edited))-1))
			}
		}
		if chunk <= max(last, 1) {
			break
		}
	}
}

// shrinkSchedule first cuts the decision list short (every later step
// non-preemptive) when the run has more than two preemptions, then undoes
// the remaining preemptions one at a time.
func (sh *shrinker) shrinkSchedule() {
	guidedRun := func(dec []int32, what string) bool {
		return sh.try(sh.config(sh.choices, sh.keeps, true, guided(dec)), true, what)
	}
	// The best run re-run guided by its own decisions is the same run;
	// from here on the schedule is edited, not drawn.
	sh.guided = true
	// The cut costs about log2(decisions) re-runs (twelve for MS-8's 3,049
	// steps). It pays off when it takes many preemptions at once. Two or
	// fewer are cheaper undone one at a time below; with none, the schedule
	// has nothing left to lose that a reader counts.
	lo, hi := 0, len(sh.decisions)
	if len(sh.res.PreemptionSteps) <= 2 {
		lo = hi
	}
	// It tries no decision at all first. A failure that needs no preemption
	// (a wrong pass, a wrong count) then loses them all in one re-run,
	// instead of log2(decisions) halvings, each with its control re-run. A
	// race loses one re-run.
	for first := true; lo < hi && sh.budget(); first = false {
		mid := (lo + hi) / 2
		if first {
			mid = 0
		}
		if guidedRun(sh.decisions[:mid:mid], fmt.Sprintf("schedule: followed the first %d decisions, then no preemption", mid)) {
			hi = min(mid, len(sh.decisions))
			continue
		}
		lo = mid + 1
	}
	// Undo preemptions, the latest first: an early one often enables the
	// bug; a late one is often noise. Undoing the preemption of A by B at
	// step p moves A's next run of steps to p, ahead of B's. Every task's
	// steps keep their order, and A goes on where it was cut off. The rest
	// of the list is followed where it still applies. Delta debugging
	// over the preemption points: undo the later half at once, then
	// quarters, down to one at a time.
	for chunk := max(len(sh.res.PreemptionSteps)/2, 1); sh.budget(); chunk = max(chunk/2, 1) {
		for end := len(sh.res.PreemptionSteps); end > 0 && sh.budget(); {
			steps := sh.res.PreemptionSteps
			if end = min(end, len(steps)); end == 0 {
				break // the last accepted run has no preemption left
			}
			from := max(end-chunk, 0)
			dec, undone := sh.decisions, 0
			for i := end - 1; i >= from; i-- { // later ones first: earlier steps keep their place
				if d, ok := undoPreemption(dec, int(steps[i])); ok {
					dec, undone = d, undone+1
				}
			}
			what := fmt.Sprintf("schedule: no preemption at step %d", steps[from])
			if undone > 1 {
				what = fmt.Sprintf("schedule: no preemption at %d steps from %d", undone, steps[from])
			}
			if undone == 0 || !guidedRun(dec, what) {
				end = from
			}
		}
		if chunk == 1 {
			break
		}
	}
}

// undoPreemption edits a decision list so that the task preempted at step
// (1-based) goes on instead: its next run of decisions moves to step. A
// clock jump (sim.ClockDecision) there is dropped instead.
func undoPreemption(dec []int32, step int) ([]int32, bool) {
	p := step - 1 // index of the preempting decision
	if p < 0 || p >= len(dec) {
		return nil, false
	}
	if dec[p] == sim.ClockDecision {
		return slices.Delete(slices.Clone(dec), p, p+1), true
	}
	b := p - 1 // the preempted task's decision, before any jumps
	for b >= 0 && dec[b] == sim.ClockDecision {
		b--
	}
	if b < 0 || dec[p] == dec[b] {
		return nil, false
	}
	a := dec[b]
	q := p + 1
	for q < len(dec) && dec[q] != a {
		q++
	}
	if q >= len(dec) {
		return nil, false // A never ran again: the run ended or it was done
	}
	r := q
	for r+1 < len(dec) && dec[r+1] == a {
		r++
	}
	out := make([]int32, 0, len(dec))
	out = append(out, dec[:p]...)
	out = append(out, dec[q:r+1]...)
	out = append(out, dec[p:q]...)
	out = append(out, dec[r+1:]...)
	return out, true
}

// recorded is what the run r recorded of its choices (protocol.ResultOf).
func recorded(r *sim.Result) *protocol.Recorded { return protocol.ResultOf(r) }

// guided is protocol.Guided's strategy.
func guided(decisions []int32) sim.Strategy { return protocol.Guided(decisions).(sim.Strategy) }

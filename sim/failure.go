package sim

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// FailureKind classifies why a run failed.
type FailureKind string

const (
	FailPanic    FailureKind = "panic"    // a task panicked
	FailCheck    FailureKind = "check"    // a task called Failf
	FailDeadlock FailureKind = "deadlock" // tasks wait and no timer can wake them
	FailLimit    FailureKind = "limit"    // steps, tasks or virtual time exceeded
	FailReplay   FailureKind = "replay"   // a replay diverged from its recording
)

// BlockedTask describes a task that was waiting when the run failed.
type BlockedTask struct {
	ID    int32
	Name  string
	Wait  string // "Lock mutex user-lock#3"
	Site  string // file:line of the first frame outside the simulator
	Stack string // set for deadlocks
}

// Failure is why a run failed. It is the Err of a Result.
type Failure struct {
	Kind    FailureKind
	Message string
	Task    string // the task that panicked or called Failf
	Stack   string
	Step    int64
	At      time.Duration // virtual time of the failure
	Blocked []BlockedTask
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at step %d, +%v: %s", f.Kind, f.Step, f.At, f.Message)
	for _, bt := range f.Blocked {
		fmt.Fprintf(&b, "\n  task %d %q waits in %s", bt.ID, bt.Name, bt.Wait)
		if bt.Site != "" {
			fmt.Fprintf(&b, " at %s", bt.Site)
		}
	}
	return b.String()
}

func (s *Sim) fillFailure() {
	f := s.failure
	f.Step = s.steps
	f.At = time.Duration(s.nowNs)
	if f.Kind == FailDeadlock {
		return
	}
	for _, t := range s.tasks {
		if t.state == taskBlocked {
			f.Blocked = append(f.Blocked, BlockedTask{ID: t.id, Name: t.name, Wait: t.waitString()})
		}
	}
}

func (s *Sim) failLimit(msg string) {
	if s.failure == nil {
		s.failure = &Failure{Kind: FailLimit, Message: msg}
		s.fillFailure()
	}
}

func (s *Sim) failReplay(msg string) {
	if s.failure == nil {
		s.failure = &Failure{Kind: FailReplay, Message: msg}
		s.fillFailure()
	}
}

// failDeadlock reports every blocked task with where it waits: each one is
// resumed just long enough to capture its own stack.
func (s *Sim) failDeadlock() {
	f := &Failure{Kind: FailDeadlock, Message: "every task is blocked and no timer is pending"}
	s.failure = f
	s.fillFailure()
	for _, t := range s.tasks {
		if t.state != taskBlocked {
			continue
		}
		wait := t.waitString()
		stack := s.captureStack(t)
		f.Blocked = append(f.Blocked, BlockedTask{ID: t.id, Name: t.name, Wait: wait, Site: waitSite(stack), Stack: stack})
	}
}

// simDir is this package's source directory: frames in its non-test files
// are the simulator's own, never the place where user code waits.
var simDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}()

// rtPkg is the seam's package path: its typed wrappers (rt.Chan) and its
// shim for translated code (rt/rtgo) are never where user code waits.
var rtPkg = reflect.TypeFor[rt.Case]().PkgPath()

// waitSite finds the first frame of a goroutine stack that is not the
// simulator, the seam, the runtime or iter: the line of user code that waits.
func waitSite(stack string) string {
	return userFrame(stack, func(fn string) bool {
		return strings.HasPrefix(fn, "runtime") || strings.HasPrefix(fn, "iter.") || strings.HasPrefix(fn, "panic(") ||
			strings.HasPrefix(fn, rtPkg+".") || strings.HasPrefix(fn, rtPkg+"/rtgo.")
	})
}

// userFrame is "function file:line" of the first frame of a runtime.Stack
// traceback that skip does not rule out and that is not in the simulator's
// own non-test files, or "".
func userFrame(stack string, skip func(fn string) bool) string {
	lines := strings.Split(stack, "\n")
	for i := 1; i+1 < len(lines); i++ {
		fn := lines[i]
		if strings.HasPrefix(fn, "\t") || fn == "" || strings.HasPrefix(fn, "created by") {
			continue
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		file := loc
		if j := strings.LastIndex(file, ":"); j >= 0 {
			file = file[:j]
		}
		dir := filepath.Dir(file)
		seam := strings.HasSuffix(dir, "/impl/rt") || strings.HasSuffix(dir, "/impl/rt/rtgo")
		if skip(fn) || seam || (dir == simDir && !strings.HasSuffix(file, "_test.go")) {
			continue
		}
		name := fn
		if j := strings.LastIndex(name, "("); j > 0 {
			name = name[:j]
		}
		return name + " " + loc
	}
	return ""
}

// Result is the outcome of one run.
type Result struct {
	Seed      uint64
	Strategy  string
	Steps     int64
	Tasks     int
	Elapsed   time.Duration // virtual
	Hash      uint64        // rolling hash of the whole trace
	Events    int64
	Decisions []int32  // each step's task id, or ClockDecision: when Config.RecordDecisions
	Header    []string // Sim.Note lines
	Tail      []string // the last trace events a person reads, formatted: for a failed run
	Err       error    // nil, *Failure, or a config error
	// TailAbout says which stretch of the run Tail covers and what it left
	// out, for its header.
	TailAbout string
	// Probes counts how often the run reached each probe (Sim.Probe).
	Probes map[string]int64

	// Operations is how many client operations the run began (Sim.OpBegin).
	Operations int64
	// Preemptions counts the steps that went to another task while the
	// last one could have gone on, and the clock's jumps while tasks could
	// run (ClockDecision); PreemptionSteps lists them (1-based) when
	// Config.RecordDecisions.
	Preemptions     int64
	PreemptionSteps []int64
	// Abandoned says Config.Abandon ended the run: its result means
	// nothing.
	Abandoned bool
	// Record is the full record when Config.Record (sim/record).
	Record *record.Record

	// recorded is what the run recorded of its Keep decisions and choices,
	// for shrinkers (protocol.ResultOf).
	recorded protocol.Recorded
	trace    *trace // a passing run's trace, for traceTail
}

// traceTail returns the run's last trace events, formatted, and their
// header in words: "last 64 of 812 events, 24 shown: 40 run steps of main
// among them left out; tasks main, reader2" (Tail and TailAbout for a
// failed run; protocol.TraceTail).
func (r *Result) traceTail() ([]string, string) {
	if r.Tail == nil && r.trace != nil {
		return r.trace.tail()
	}
	return r.Tail, r.TailAbout
}

// Failure returns the run's failure, or nil.
func (r Result) Failure() *Failure {
	f, _ := r.Err.(*Failure)
	return f
}

func (s *Sim) result() Result {
	s.trace.flush()
	r := Result{
		Seed:      s.cfg.Seed,
		Strategy:  s.strategy.String(),
		Steps:     s.steps,
		Tasks:     len(s.tasks),
		Elapsed:   time.Duration(s.nowNs),
		Hash:      s.trace.hash,
		Events:    s.trace.count,
		Decisions: s.trace.decisions,
		Header:    s.header,
		Probes:    s.probes,
		Abandoned: s.abandoned,

		Operations:      s.operations,
		Preemptions:     s.preemptions,
		PreemptionSteps: s.preemptSteps,
		Record:          s.recordOut(),
	}
	r.recorded = s.recorded
	if rc := &r.recorded; s.cfg.replay.RecordChoices {
		s.worldSrc.recordPromises()
		rc.Choices, rc.ChoiceKeys, rc.KeepSites, rc.ChoicesCut = s.worldSrc.rec, s.worldSrc.recKeys, s.worldSrc.sites, s.worldSrc.cut
		rc.Horizon = s.worldSrc.horizon()
		if rc.ChoiceKeys == nil {
			rc.ChoiceKeys = []keepKey{}
		}
	}
	// Formatting the tail is most of a short run's cost. A passing run
	// keeps the events and formats them only if asked (TraceTail), as a
	// harness does when its own check fails after the run.
	if s.failure != nil {
		r.Tail, r.TailAbout = s.trace.tail()
	} else if !s.cfg.tailOnFailure {
		r.trace = &s.trace
	}
	if s.failure != nil {
		r.Err = s.failure
	}
	return r
}

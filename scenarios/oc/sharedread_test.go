package oc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// The shared open-set read that ends badly: readers who asked while
// another reader's read of the same community ran have joined that read,
// and its end is theirs to handle. Two endings, both rare in a random run
// (a read must fail, or its caller give up, while others wait on it), are
// reached here on purpose:
//
//   - failed: the database fails the read. Each joined reader must fail
//     too, with that error, or answer exactly the tables' union after
//     reading again; an answer without the open half, given as if it were
//     complete, is wrong data.
//   - abandoned: the reader who started the read gives up (its context
//     ends) while others wait. They did not give up: each must read again
//     and answer exactly the tables' union, not fail with somebody else's
//     cancellation.
//
// The same construction checks the answers (OC-1,
// TestOC1_SharedReadFailedOrAbandoned) and the counters (OC-9,
// TestOC9_MetricsAcrossFailedAndAbandonedReads). For OC-9 a read can end
// badly in either half, so its runs add the member half's two endings:
// after the shared read, a lookup whose member read the database fails and
// one whose caller gives up while its member read runs. Neither reaches the
// open half, and each is still a member-half miss: a miss counted only
// after a successful read (or not counted when the read ends badly) shows
// only here.
const (
	probeJoinedFailedRead    = "oc/joined-a-read-that-failed"
	probeJoinedAbandonedRead = "oc/joined-a-read-its-caller-abandoned"
	probeMemberReadFailed    = "oc/a-member-read-failed"
	probeMemberReadAbandoned = "oc/a-member-read-its-caller-abandoned"
)

// TestOC1_SharedReadFailedOrAbandoned checks OC-1 where a random run
// seldom goes: readers who joined another reader's open-set read, when that
// read fails or its caller gives up. Each seed builds one of the two
// endings (flySharedRead); every answer must be exactly the tables' union,
// or, after a failed read, that read's error.
func TestOC1_SharedReadFailedOrAbandoned(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-1", Seeds: 20,
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true, Tally: map[string]int64{}}
			run, err := flySharedRead(s, s.Rand().IntN(2) == 1, false)
			if err != nil {
				return smp, err
			}
			smp.Of = int64(len(run.answers))
			smp.Tally[map[bool]string{false: "failed", true: "abandoned"}[run.abandon]]++
			for _, a := range run.answers[1:] {
				if a.err == nil {
					smp.Tally["answered"]++
				} else {
					smp.Tally["failedWithTheRead"]++
				}
			}
			smp.Witness = fmt.Sprintf("%d joiners of %s: %s", len(run.answers)-1, run.endingName(), run.summary())
			if wrong := run.wrongAnswers(); len(wrong) > 0 {
				return smp, fmt.Errorf("OC-1: after %s: %s", run.endingName(), joinLines(wrong))
			}
			return smp, nil
		},
		Sample: func(x claims.Sample) claims.Sample { return x },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d seeds with a failed shared read and %d with one its caller abandoned: %d lookups, of which the joiners answered the tables' union %d times and failed with the read's error %d times; %d seeds failed",
				o.Tally["failed"], o.Tally["abandoned"], o.Of, o.Tally["answered"], o.Tally["failedWithTheRead"], o.Failed)
		},
		Probes: []claims.Probe{
			{Name: probeJoinedFailedRead, What: "a reader joined a shared open-set read that then failed", Min: 10},
			{Name: probeJoinedAbandonedRead, What: "a reader joined a shared open-set read whose caller then gave up", Min: 10},
		},
	})
}

// TestOC9_MetricsAcrossFailedAndAbandonedReads checks OC-9 on the same
// constructions, with reads ending badly in both halves: each lookup counts
// one miss of each half it reached (every lookup reaches the member half;
// one whose member read failed or was abandoned reaches no open half),
// however often a joiner had to start over after an abandoned read, and
// none counts a hit. The expected counts are the harness's own: the lookups
// it made, and which of them it made fail in the member half.
func TestOC9_MetricsAcrossFailedAndAbandonedReads(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-9", Seeds: 20,
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true, Tally: map[string]int64{}}
			run, err := flySharedRead(s, s.Rand().IntN(2) == 1, true)
			if err != nil {
				return smp, err
			}
			lookups, open := run.lookups()
			smp.Of = lookups
			for _, m := range run.memberEnds {
				smp.Tally[map[bool]string{false: "memberFailed", true: "memberAbandoned"}[m.abandon]]++
			}
			smp.Witness = fmt.Sprintf("%d lookups around %s and %s: one member-half miss each, one open-half miss each of the %d that reached the open half, no hit",
				lookups, run.endingName(), run.memberEndsName(), open)
			if wrong := append(run.wrongMemberEnds(), run.wrongCounters()...); len(wrong) > 0 {
				return smp, fmt.Errorf("OC-9: after %s and %s: %s", run.endingName(), run.memberEndsName(), joinLines(wrong))
			}
			return smp, nil
		},
		Sample: func(x claims.Sample) claims.Sample { return x },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("the %s counters moved by exactly one miss per half reached per lookup over %d lookups around failed and abandoned shared open-set reads, %d failed member reads and %d member reads their callers abandoned; %d seeds failed",
				metricsFamilyPrefix+"/"+memberFamilyPrefixes, o.Of, o.Tally["memberFailed"], o.Tally["memberAbandoned"], o.Failed)
		},
		Probes: []claims.Probe{
			{Name: probeJoinedAbandonedRead, What: "a reader joined a shared open-set read whose caller then gave up (and started over)", Min: 10},
			{Name: probeMemberReadFailed, What: "a lookup's member read failed (the lookup failed with its error)", Min: 20},
			{Name: probeMemberReadAbandoned, What: "a lookup's caller gave up while its member read ran", Min: 20},
		},
	})
}

// errSharedReadFails is the database error of the failed ending.
var errSharedReadFails = errors.New("injected: the shared open-set read fails")

// errMemberReadFails is the database error of a failed member read.
var errMemberReadFails = errors.New("injected: the member read fails")

// sharedAnswer is one reader's lookup.
type sharedAnswer struct {
	reader    authz.ID
	leader    bool
	got, want []authz.ID
	err       error
}

// memberEnd is a lookup whose member read ended badly: the database
// failed it, or (abandon) its caller gave up while it ran.
type memberEnd struct {
	abandon  bool
	reader   authz.ID
	injected int // member reads the harness failed or slowed for it: 1
	err      error
}

// sharedRun is one construction: its ending, the answers, the lookups
// whose member read ended badly, and the pod's counters before and after.
type sharedRun struct {
	abandon       bool
	latency       time.Duration
	answers       []sharedAnswer
	memberEnds    []memberEnd
	reads         int // open-set reads started while the joiners asked
	before, after map[string]int64
}

// flySharedRead runs one construction on a single pod: a cold lookup whose
// open-set read takes latency and then fails (or whose caller gives up
// halfway), and 1 to 4 other readers who ask while it runs, at random
// instants. Member-half reads and every later open-set read take no time,
// so that each reader reaches the open half at the instant it asks. With
// memberEnds, two more lookups follow, one at a time, by a reader no lookup
// has cached: one whose member read takes latency and fails, one whose
// caller gives up while its member read runs, in a seed-drawn order. They
// run alone, so the member read the harness fails or slows is theirs.
func flySharedRead(s *sim.Sim, abandon, memberEnds bool) (sharedRun, error) {
	run := sharedRun{abandon: abandon}
	ctx := context.Background()
	c := pods.DefaultChurn()
	tables, err := c.Tables()
	if err != nil {
		return run, err
	}
	w, err := pods.NewWorld(s, pods.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency},
		Bus: simbus.Config{Faults: simbus.Reliable()}}, tables)
	if err != nil {
		return run, err
	}
	pod := w.Pods[0]
	readers := append(slices.Clone(c.NonMembers), c.Members...)
	s.Rand().Shuffle(len(readers), func(i, j int) { readers[i], readers[j] = readers[j], readers[i] })
	joiners := 1 + s.Rand().IntN(min(4, len(readers)-1))
	run.latency = 40*time.Millisecond + time.Duration(s.Rand().Int64N(int64(60*time.Millisecond)))
	window := run.latency // the joiners ask while the first read runs
	if abandon {
		window = run.latency / 2 // and before its caller gives up
	}

	first := time.Duration(-1)
	var memberFault *simdb.Fault // the next member read's ending, set while a member-ending lookup runs alone
	memberFaults := 0            // member reads failed or slowed so far
	restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
		switch {
		case !st.Write && st.Name == pods.StmtMemberChannels && memberFault != nil:
			f := *memberFault
			memberFault = nil
			memberFaults++
			return f, true
		case st.Write || st.Name != pods.StmtListedOpenChannels:
			return simdb.Fault{Fixed: true, Required: true}, true
		case first < 0:
			first = s.Elapsed()
			f := simdb.Fault{Fixed: true, Latency: run.latency, Required: true}
			if !abandon {
				f.Err = errSharedReadFails
			}
			return f, true
		}
		if s.Elapsed() < first+window {
			run.reads++ // a read of its own, not a join
		}
		return simdb.Fault{Fixed: true, Required: true}, true
	})
	if err != nil {
		return run, err
	}
	defer restore()
	run.before = pod.OC.Metrics().Snapshot()

	run.answers = make([]sharedAnswer, 1+joiners)
	wg := s.NewWaitGroup("shared-readers")
	wg.Add(1 + joiners)
	s.Go("leader", func() {
		defer wg.Done()
		lctx, cancel := ctx, context.CancelFunc(func() {})
		if abandon {
			lctx, cancel = s.WithTimeout(ctx, window)
		}
		defer cancel()
		a := &run.answers[0]
		a.reader, a.leader = readers[0], true
		a.got, a.err = pod.OC.Accessible(lctx, c.Community, a.reader)
	})
	for i := 1; i <= joiners; i++ {
		at := time.Millisecond + time.Duration(s.Rand().Int64N(int64(window-2*time.Millisecond)))
		s.Go(fmt.Sprintf("joiner%d", i), func() {
			defer wg.Done()
			if err := s.Sleep(ctx, at); err != nil {
				return
			}
			a := &run.answers[i]
			a.reader = readers[i]
			a.got, a.err = pod.OC.Accessible(ctx, c.Community, a.reader)
		})
	}
	if err := wg.Wait(ctx); err != nil {
		return run, err
	}
	if memberEnds {
		// A failed member read caches nothing, so one cold reader the
		// shared read's lookups did not use serves both.
		spare := readers[1+joiners:]
		if len(spare) == 0 {
			return run, fmt.Errorf("setup: %d readers, all used by the shared read's %d lookups", len(readers), 1+joiners)
		}
		reader := spare[s.Rand().IntN(len(spare))]
		quitFirst := s.Rand().IntN(2) == 1
		for _, quit := range []bool{quitFirst, !quitFirst} {
			f := simdb.Fault{Fixed: true, Latency: run.latency, Required: true}
			lctx, cancel := ctx, context.CancelFunc(func() {})
			if quit { // gives up somewhere inside the member read
				lctx, cancel = s.WithTimeout(ctx, time.Millisecond+time.Duration(s.Rand().Int64N(int64(run.latency-2*time.Millisecond))))
			} else {
				f.Err = errMemberReadFails
			}
			memberFault = &f
			before := memberFaults
			_, err := pod.OC.Accessible(lctx, c.Community, reader)
			cancel()
			memberFault = nil
			m := memberEnd{abandon: quit, reader: reader, injected: memberFaults - before, err: err}
			run.memberEnds = append(run.memberEnds, m)
			if m.wrong() == "" {
				s.Probe(map[bool]string{false: probeMemberReadFailed, true: probeMemberReadAbandoned}[quit])
			}
		}
	}
	run.after = pod.OC.Metrics().Snapshot()
	state := w.DB.State()
	for i := range run.answers {
		run.answers[i].want = expectedAccessible(state, c.Community, run.answers[i].reader)
	}
	if run.reads == 0 {
		// Every joiner asked while the first read ran and started no read
		// of its own: each joined it.
		name := probeJoinedFailedRead
		if abandon {
			name = probeJoinedAbandonedRead
		}
		for range joiners {
			s.Probe(name)
		}
	}
	return run, nil
}

// wrongAnswers returns what is wrong with the answers of run, one line per
// reader (OC-1).
func (run sharedRun) wrongAnswers() []string {
	var out []string
	for _, a := range run.answers {
		who := "joiner " + pods.Short(a.reader)
		if a.leader {
			who = "leader " + pods.Short(a.reader)
		}
		switch {
		case a.leader && a.err == nil && !run.abandon:
			out = append(out, fmt.Sprintf("%s: its read failed, yet it answered %s", who, shortIDs(a.got)))
		case a.leader && run.abandon && !errors.Is(a.err, context.DeadlineExceeded):
			out = append(out, fmt.Sprintf("%s gave up: want its own deadline's error, got %v (answer %s)", who, a.err, shortIDs(a.got)))
		case a.leader:
		case a.err == nil && !slices.Equal(a.got, a.want):
			out = append(out, fmt.Sprintf("%s: answered %s, the tables' union is %s", who, shortIDs(a.got), shortIDs(a.want)))
		case a.err != nil && run.abandon:
			out = append(out, fmt.Sprintf("%s did not give up, yet failed: %v", who, a.err))
		case a.err != nil && !errors.Is(a.err, errSharedReadFails):
			out = append(out, fmt.Sprintf("%s: failed with %v, not the read's error", who, a.err))
		}
	}
	return out
}

// wrong says how a member-ending lookup did not end as the harness made
// it end ("" if it did): its one member read failed or slowed, and the
// lookup failed with that read's error, or its own deadline's.
func (m memberEnd) wrong() string {
	who := "reader " + pods.Short(m.reader)
	switch {
	case m.injected != 1:
		return fmt.Sprintf("%s's lookup ran %d member reads, want 1 (it was cold)", who, m.injected)
	case m.abandon && !errors.Is(m.err, context.DeadlineExceeded):
		return fmt.Sprintf("%s gave up during its member read: want its own deadline's error, got %v", who, m.err)
	case !m.abandon && !errors.Is(m.err, errMemberReadFails):
		return fmt.Sprintf("%s's member read failed: want the read's error, got %v", who, m.err)
	}
	return ""
}

// wrongMemberEnds returns what is wrong with the member-ending lookups,
// one line per lookup: the counters' expectation rests on their ending.
func (run sharedRun) wrongMemberEnds() []string {
	var out []string
	for _, m := range run.memberEnds {
		if w := m.wrong(); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// lookups returns how many lookups the harness made, and how many of them
// reached the open half: all but those whose member read it ended badly.
func (run sharedRun) lookups() (all, open int64) {
	open = int64(len(run.answers))
	return open + int64(len(run.memberEnds)), open
}

// wrongCounters returns the counters of OC-9 that did not move as the
// lookups did: each lookup is one member-half miss (every reader is cold,
// and a member read that failed or was abandoned is a miss all the same),
// each that reached the open half is one open-half miss, reason absent
// (nothing was cached), and none is a hit, however often a joiner had to
// start over.
func (run sharedRun) wrongCounters() []string {
	lookups, open := run.lookups()
	want := map[string]int64{
		seriesMemberMisses: lookups, seriesMemberHits: 0,
		seriesOpenAbsent: open, seriesOpenExpired: 0, seriesOpenHits: 0,
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if d := run.after[name] - run.before[name]; d != want[name] {
			out = append(out, fmt.Sprintf("%s moved by %d over %d lookups (%d of them reached the open half), want %d", name, d, lookups, open, want[name]))
		}
	}
	return out
}

// memberEndsName names the member-ending lookups for reports.
func (run sharedRun) memberEndsName() string {
	if len(run.memberEnds) == 0 {
		return "no member read ending badly"
	}
	var parts []string
	for _, m := range run.memberEnds {
		parts = append(parts, map[bool]string{false: "a member read that failed", true: "a member read its caller abandoned"}[m.abandon])
	}
	return strings.Join(parts, ", then ")
}

// endingName names a run's ending for reports.
func (run sharedRun) endingName() string {
	if run.abandon {
		return fmt.Sprintf("a %v read its caller abandoned halfway", run.latency)
	}
	return fmt.Sprintf("a %v read that failed", run.latency)
}

// summary says how the joiners ended.
func (run sharedRun) summary() string {
	answered, failed := 0, 0
	for _, a := range run.answers[1:] {
		if a.err == nil {
			answered++
		} else {
			failed++
		}
	}
	return fmt.Sprintf("%d answered the tables' union, %d failed with the read's error", answered, failed)
}

func joinLines(lines []string) string { return strings.Join(lines, "; ") }

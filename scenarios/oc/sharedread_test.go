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
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
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
// Each ending runs from one of two starts. Cold: nothing is cached, so
// there is nothing an ending could fall back on. Aged: the pod cached the
// community's open set, a channel of it was revoked through another pod
// (the reading pod loses every invalidation), and the entry has aged past
// the open set's max age while it is still inside the TTL. That entry is
// what a wrong ending would fall back on: a retry after the abandoned
// read, or a failed read, answered from it. Its answer grants the revoked
// channel longer than OC-2 allows. So the aged runs judge the answers with
// OC-2's grant-staleness bound as well as against the final tables.
//
// The same construction checks the answers (OC-1,
// TestOC1_SharedReadFailedOrAbandoned; OC-2 on the aged start,
// TestOC2_SharedReadEndingOverAgedOpenSet) and the counters (OC-9,
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
	// probeRetryOverAgedOpenSet: a reader who joined an abandoned read
	// started over while the pod's cached open set was past its max age
	// and still inside its TTL, with a channel of it revoked meanwhile.
	probeRetryOverAgedOpenSet = "oc/retried-after-an-abandoned-read-over-an-aged-open-set"
)

// sharedOpts chooses one construction of flySharedRead.
type sharedOpts struct {
	abandon    bool // the leader gives up, rather than its read failing
	aged       bool // the aged start (see above), rather than the cold one
	memberEnds bool // two member-half endings follow (OC-9)
}

// drawSharedOpts draws the ending and the start from the seed.
func drawSharedOpts(s *sim.Sim, memberEnds bool) sharedOpts {
	return sharedOpts{abandon: s.Rand().IntN(2) == 1, aged: s.Rand().IntN(2) == 1, memberEnds: memberEnds}
}

// TestOC1_SharedReadFailedOrAbandoned checks OC-1 where a random run
// seldom goes: readers who joined another reader's open-set read, when that
// read fails or its caller gives up. Each seed builds one of the two
// endings from a cold or an aged start (flySharedRead); every answer must
// be exactly the tables' union, or, after a failed read, that read's error.
func TestOC1_SharedReadFailedOrAbandoned(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-1", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true, Tally: map[string]int64{}}
			run, err := flySharedRead(s, drawSharedOpts(s, false))
			if err != nil {
				return smp, err
			}
			smp.Of = int64(len(run.answers))
			smp.Tally[map[bool]string{false: "failed", true: "abandoned"}[run.abandon]]++
			if run.aged {
				smp.Tally["aged"]++
			}
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
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d seeds with a failed shared read and %d with one its caller abandoned (%d of them over an aged cached open set with a channel revoked meanwhile): %d lookups, of which the joiners answered the tables' union %d times and failed with the read's error %d times; %d seeds failed",
				o.Tally["failed"], o.Tally["abandoned"], o.Tally["aged"], o.Of, o.Tally["answered"], o.Tally["failedWithTheRead"], o.Failed)
		},
		Probes: []claims.Probe{
			{Name: probeJoinedFailedRead, What: "a reader joined a shared open-set read that then failed", Min: 10},
			{Name: probeJoinedAbandonedRead, What: "a reader joined a shared open-set read whose caller then gave up", Min: 10},
		},
	})
}

// TestOC2_SharedReadEndingOverAgedOpenSet checks OC-2 on the aged start of
// the shared read that ends badly: the pod's cached open set is past its
// max age (inside its TTL) and lists a channel revoked meanwhile, whose
// invalidation the pod lost. The random churn and the races of the other
// OC-2 checks never make a leader give up or a read fail. So nothing else
// shows a lookup that answers from that aged entry (a grant as stale as
// the entry is old) after an abandoned or a failed read. Every non-member
// grant of the run is judged by the exact
// staleness checker against the table's bound; a retry over the aged entry
// must be reached (probe).
func TestOC2_SharedReadEndingOverAgedOpenSet(t *testing.T) {
	lo, hi := agedRange()
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-2", Bound: "open set max age", Options: simtest.Options{Seeds: 20}, Sampled: true,
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			o := drawSharedOpts(s, false)
			o.aged = true
			run, err := flySharedRead(s, o)
			if err != nil {
				return claims.Sample{}, err
			}
			return nonMemberGrants(run.w, b)
		},
		Measured: staleMeasured("grant-staleness of non-member reads around a failed or abandoned shared open-set read over an aged cached open set"),
		Probes: []claims.Probe{
			{Name: probeRetryOverAgedOpenSet, What: "a reader who joined an abandoned read started over while the cached open set was past its max age, a channel of it revoked", Min: 10},
		},
		Note: fmt.Sprintf("two pods, the reading pod loses every invalidation; its open set is cached, a channel of it revoked (a seeded kind), and it ages %v to %v after the revocation (past the max age, inside the TTL) before a shared read fails or is abandoned", lo, hi),
	})
}

// TestOC9_MetricsAcrossFailedAndAbandonedReads checks OC-9 on the same
// constructions, with reads ending badly in both halves. Each lookup
// counts one miss of each half it reached, however often a joiner had to
// start over after an abandoned read, and none counts a hit. Every lookup
// reaches the member half; one whose member read failed or was abandoned
// reaches no open half. The open-half misses are reason="absent" from the cold
// start and reason="expired" from the aged one. The expected counts are the
// harness's own: the lookups it made, and which of them it made fail in
// the member half. The counters are read as a Prometheus server reads them
// (series.Scrape), so an exposition no scraper parses fails too.
func TestOC9_MetricsAcrossFailedAndAbandonedReads(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-9", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true, Tally: map[string]int64{}}
			run, err := flySharedRead(s, drawSharedOpts(s, true))
			if err != nil {
				return smp, err
			}
			lookups, open := run.lookups()
			smp.Of = lookups
			for _, m := range run.memberEnds {
				smp.Tally[map[bool]string{false: "memberFailed", true: "memberAbandoned"}[m.abandon]]++
			}
			if run.aged {
				smp.Tally["aged"]++
			}
			smp.Witness = fmt.Sprintf("%d lookups around %s and %s: one member-half miss each, one open-half miss (%s) each of the %d that reached the open half, no hit",
				lookups, run.endingName(), run.memberEndsName(), run.openMissSeries(), open)
			if wrong := append(run.wrongMemberEnds(), run.wrongCounters()...); len(wrong) > 0 {
				return smp, fmt.Errorf("OC-9: after %s and %s: %s", run.endingName(), run.memberEndsName(), joinLines(wrong))
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("the %s counters, as scraped, moved by exactly one miss per half reached per lookup over %d lookups around failed and abandoned shared open-set reads (%d seeds over an aged cached open set), %d failed member reads and %d member reads their callers abandoned; %d seeds failed",
				metricsFamilyPrefix+"/"+memberFamilyPrefixes, o.Of, o.Tally["aged"], o.Tally["memberFailed"], o.Tally["memberAbandoned"], o.Failed)
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

// skipped: a shrinker's replay dropped the lookup (pods.ErrSkipped); it
// asked nothing and counts nowhere.
func (a sharedAnswer) skipped() bool { return errors.Is(a.err, pods.ErrSkipped) }

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
	sharedOpts
	w             *pods.World
	latency       time.Duration
	answers       []sharedAnswer
	memberEnds    []memberEnd
	reads         int // open-set reads started while the joiners asked
	before, after map[string]int64
	// The aged start: the revocation and its channel, and when the priming
	// lookup (whose open-set read the cached entry holds) was invoked and
	// returned.
	kind                    pods.Change
	revoked                 authz.ID
	primeInvoke, primeDone  time.Duration
	abandonedAt             time.Duration // the leader's lookup ended (its deadline)
	retriedOverAgedOpenSets int           // joiners who started over while the cached entry was aged
}

// flySharedRead runs one construction on the reading pod: a lookup whose
// open-set read takes latency and then fails (or whose caller gives up
// halfway), and 1 to 4 other readers who ask while it runs, at random
// instants. From the cold start that lookup is the pod's first. From the
// aged start (o.aged) the world has a second pod, and the reading pod loses
// every invalidation. A reader no other lookup uses primes the open set.
// One of its channels is revoked through the other pod (a seeded kind).
// The construction starts once the entry is past the open set's max age,
// counted from when that revocation returned, and well inside the TTL. So
// an answer from the entry is stale by more than the bound. Both
// bounds come from the claims table. Member-half reads and every later
// open-set read take no time, so that each reader reaches the open half at
// the instant it asks. With memberEnds, two more lookups follow, one at a
// time, by a reader no lookup has cached: one whose member read takes
// latency and fails, one whose caller gives up while its member read runs,
// in a seed-drawn order. They run alone, so the member read the harness
// fails or slows is theirs.
func flySharedRead(s *sim.Sim, o sharedOpts) (sharedRun, error) {
	run := sharedRun{sharedOpts: o}
	ctx := context.Background()
	c := pods.DefaultChurn()
	tables, err := c.Tables()
	if err != nil {
		return run, err
	}
	cfg := pods.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency}, Bus: simbus.Config{Faults: simbus.Reliable()}}
	if o.aged {
		cfg = pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency},
			PodFaults: []simbus.Faults{simbus.Reliable(), {LossProb: 1}}}
	}
	w, err := pods.NewWorld(s, cfg, tables)
	if err != nil {
		return run, err
	}
	run.w = w
	pod := w.Pods[len(w.Pods)-1] // the reading pod (from the aged start, the one that hears nothing)
	readers := append(slices.Clone(c.NonMembers), c.Members...)
	s.Rand().Shuffle(len(readers), func(i, j int) { readers[i], readers[j] = readers[j], readers[i] })
	joiners := 1 + s.Rand().IntN(min(4, len(readers)-1))
	run.latency = 40*time.Millisecond + time.Duration(s.Rand().Int64N(int64(60*time.Millisecond)))
	window := run.latency // the joiners ask while the first read runs
	if o.abandon {
		window = run.latency / 2 // and before its caller gives up
	}
	if o.aged {
		if err := ageOpenSet(s, w, c, readers, &run); err != nil {
			return run, err
		}
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
			if !o.abandon {
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
	if run.before, err = scrapeOC(pod); err != nil {
		return run, err
	}

	run.answers = make([]sharedAnswer, 1+joiners)
	wg := s.NewWaitGroup("shared-readers")
	wg.Add(1 + joiners)
	s.Go("leader", func() {
		defer wg.Done()
		lctx, cancel := ctx, context.CancelFunc(func() {})
		if o.abandon {
			lctx, cancel = s.WithTimeout(ctx, window)
		}
		defer cancel()
		a := &run.answers[0]
		a.reader, a.leader = readers[0], true
		a.got, a.err = w.Accessible(lctx, pod, 1, c.Community, a.reader)
		run.abandonedAt = s.Elapsed()
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
			a.got, a.err = w.Accessible(ctx, pod, 1+i, c.Community, a.reader)
		})
	}
	if err := wg.Wait(ctx); err != nil {
		return run, err
	}
	if o.memberEnds {
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
	if run.after, err = scrapeOC(pod); err != nil {
		return run, err
	}
	state := w.DB.State()
	for i := range run.answers {
		run.answers[i].want = expectedAccessible(state, c.Community, run.answers[i].reader)
	}
	if run.reads == 0 {
		// Every joiner asked while the first read ran and started no read
		// of its own: each joined it.
		name := probeJoinedFailedRead
		if o.abandon {
			name = probeJoinedAbandonedRead
		}
		for _, a := range run.answers[1:] {
			if !a.skipped() {
				s.Probe(name)
			}
		}
		if o.aged && o.abandon && run.agedAt(run.abandonedAt) {
			// Each joiner who then answered started over at the abandon,
			// when the cached entry was past its max age and still cached.
			for _, a := range run.answers[1:] {
				if a.err == nil {
					run.retriedOverAgedOpenSets++
					s.Probe(probeRetryOverAgedOpenSet)
				}
			}
		}
	}
	return run, nil
}

// ageOpenSet is the aged start. A priming reader of its own fills the
// reading pod's open set. A channel of it is revoked through the other pod
// (every shared-read reader and the primer are tracked as non-members of
// it). The run waits until the entry is past the max age, counted from
// when the revocation returned, and at most halfway to the TTL. The cached
// entry is then aged, lists the revoked channel, and is still there.
func ageOpenSet(s *sim.Sim, w *pods.World, c pods.Churn, readers []authz.ID, run *sharedRun) error {
	ctx := context.Background()
	run.revoked = c.OpenChannels[s.Rand().IntN(len(c.OpenChannels))]
	run.kind = revocations[s.Rand().IntN(len(revocations))]
	primer := authz.NewID('r', 1) // a reader of no channel, used by no other lookup
	for _, r := range append(slices.Clone(readers), primer) {
		if err := w.Track(pods.Key{Family: pods.OC, Community: c.Community, Subject: r, Channel: run.revoked}, pods.NonMember); err != nil {
			return err
		}
	}
	reader := w.Pods[len(w.Pods)-1]
	run.primeInvoke = s.Elapsed()
	got, err := w.Accessible(ctx, reader, 0, c.Community, primer)
	if err != nil {
		return fmt.Errorf("setup: priming the open set: %w", err)
	}
	run.primeDone = s.Elapsed()
	if !slices.Contains(got, run.revoked) {
		return fmt.Errorf("setup: the primed open set %s lacks %s", shortIDs(got), pods.Short(run.revoked))
	}
	if err := w.Write(ctx, w.Pods[0], 0, run.kind, c.Community, authz.ID{}, run.revoked); err != nil {
		return fmt.Errorf("setup: %s %s: %w", run.kind, pods.Short(run.revoked), err)
	}
	lo, hi := agedRange()
	return s.Sleep(ctx, lo+time.Duration(s.Rand().Int64N(int64(hi-lo))))
}

// agedRange is how long the aged start waits after the revocation: from
// the max age to halfway between it and the TTL, both from the claims table.
func agedRange() (lo, hi time.Duration) {
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	ttl := claims.Get("OC-7", "member ttl").Duration() // the one TTL of both halves (OC-2: the open set falls back to it)
	return maxAge, maxAge + (ttl-maxAge)/2
}

// agedAt says whether the pod's cached open set was aged at t, by the
// harness's instants. Its read began no later than the priming lookup
// returned, so it was past the max age from primeDone+maxAge on. It was
// put no earlier than the priming lookup was invoked, so it was still
// cached before primeInvoke+ttl.
func (run sharedRun) agedAt(t time.Duration) bool {
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	ttl := claims.Get("OC-7", "member ttl").Duration()
	return t >= run.primeDone+maxAge && t < run.primeInvoke+ttl
}

// scrapeOC reads the pod's OC counters as a Prometheus server does
// (series.Scrape), checking both halves' series the claims table names.
func scrapeOC(pod *pods.Pod) (map[string]int64, error) {
	got, err := series.Scrape(pod.OC.Metrics(), metricsFamilyPrefix)
	if err != nil {
		return nil, fmt.Errorf("scraping pod %d's OC counters: %w", pod.ID, err)
	}
	if _, err := series.Scrape(pod.OC.Metrics(), memberFamilyPrefixes); err != nil {
		return nil, fmt.Errorf("scraping pod %d's OC counters: %w", pod.ID, err)
	}
	return got, nil
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
		case a.skipped():
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
	for _, a := range run.answers {
		if !a.skipped() {
			open++
		}
	}
	return open + int64(len(run.memberEnds)), open
}

// wrongCounters returns the counters of OC-9 that did not move as the
// lookups did. Each lookup is one member-half miss: every reader is cold,
// and a member read that failed or was abandoned is a miss all the same.
// Each that reached the open half is one open-half miss. Its reason is
// absent from the cold start (nothing was cached), and expired from the
// aged one (the cached entry was past its max age for every lookup: none
// was filled before the ending). None is a hit, however often a joiner had
// to start over.
func (run sharedRun) wrongCounters() []string {
	lookups, open := run.lookups()
	want := map[string]int64{
		seriesMemberMisses: lookups, seriesMemberHits: 0,
		seriesOpenAbsent: 0, seriesOpenExpired: 0, seriesOpenHits: 0,
	}
	want[run.openMissSeries()] = open
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

// openMissSeries is the open-half miss series the run's lookups count.
func (run sharedRun) openMissSeries() string {
	if run.aged {
		return seriesOpenExpired
	}
	return seriesOpenAbsent
}

// endingName names a run's ending (and its start) for reports.
func (run sharedRun) endingName() string {
	start := "from a cold cache"
	if run.aged {
		start = fmt.Sprintf("over a cached open set aged past its max age, %s revoked (%s) meanwhile with the invalidation lost", pods.Short(run.revoked), run.kind)
	}
	if run.abandon {
		return fmt.Sprintf("a %v read its caller abandoned halfway, %s", run.latency, start)
	}
	return fmt.Sprintf("a %v read that failed, %s", run.latency, start)
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

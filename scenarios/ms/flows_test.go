package ms

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS7_EveryFlowUnderFaults flies every MS cell of pods.Flows (each
// path of impl/membership from IsMember or Subscribe × each database call
// it makes: the snapshot load, the oversize point check after a load and
// from a marker, the wait-timeout fallback, the subscription's confirming
// point check) under each fault kind: the call fails, the caller's context
// is cancelled during it, or it answers late. Each seed flies every cell
// under every kind in a random order, on one pod with MaxSnapshotIDs 4 (a
// user in six channels is oversize) and a clean database otherwise. After
// each faulted check and a clean check that follows it, the answer (MS-7:
// the fault's error, propagated; else the tables, or what the harness's
// account of the user's snapshot holds) and every counter of the pod must
// match the harness's own account. A failed load leaves no decision and
// counts one miss, a fallback is counted when its point check is made
// (also when that fails), and a failed confirmation neither counts a
// confirmed member nor drops the snapshot. The probes require every cell
// × kind to have been injected and its effect seen.
func TestMS7_EveryFlowUnderFaults(t *testing.T) {
	probes := pods.FaultProbes(msCells())
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-7", Options: simtest.Options{Seeds: 3},
		Fly:    flyMSFaults,
		Probes: probes,
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d faulted or following checks with a wrong answer or counter, over %d cells x %d fault kinds", o.Wrong, o.Of, len(msCells()), len(pods.FaultKinds))
		},
		Note: "one pod, MaxSnapshotIDs 4; every MS flow x call of pods.Flows under an error, a cancellation and a slow answer; counters compared with the harness's account after each check",
	})
}

func msCells() []pods.FlowCall { return pods.CellsOf("MS") }

// The harness's flows of membership, by the path below IsMember.
const (
	pathLoad        = "membership.Cache.IsMember>Cache.load>Cache.fetch"
	pathLoadOver    = "membership.Cache.IsMember>Cache.load>Cache.oversizeCheck>Cache.pointCheck"
	pathMarker      = "membership.Cache.IsMember>Cache.oversizeCheck>Cache.pointCheck"
	pathWaitTimeout = "membership.Cache.IsMember>Cache.waitTimeoutCheck>Cache.pointCheck"
	pathConfirm     = "membership.Cache.Subscribe>Cache.pointCheck"
	subscribePrefix = "membership.Cache.Subscribe>"
)

var (
	seriesConfirms  = series0("membership_cache_subscription_confirms")
	seriesConfirmed = series0("membership_cache_subscription_confirmed_members")
)

func series0(prefix string) string { return prefix + "_total" }

// msEntry is the harness's account of one user's entry.
type msEntry struct {
	kind   membership.Kind // 0: none (or a load's leftover, which decides nothing)
	ids    []authz.ID      // a snapshot's channels
	expiry time.Duration
}

type msFlight struct {
	s        *sim.Sim
	w        *pods.World
	pod      *pods.Pod
	inj      *pods.Injector
	smp      *claims.Sample
	fresh    time.Duration
	maxIDs   int
	entries  map[authz.ID]*msEntry
	channels []authz.ID
}

func flyMSFaults(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
	var smp claims.Sample
	const nChannels, maxIDs = 6, 4
	r := s.Rand()
	// u1: a normal user; u2: oversize (all six channels); u3: the
	// subscriber whose snapshot the check makes stale.
	members := [][]int{{1 + r.IntN(3), 4 + r.IntN(3)}, {1, 2, 3, 4, 5, 6}, {1 + r.IntN(6)}}
	tables, err := tablesOf(nChannels, members)
	if err != nil {
		return smp, err
	}
	inj := pods.NewInjector(s)
	cfg := pods.Config{Pods: 1, Bus: simbus.Config{Faults: simbus.Reliable()},
		MS: membership.Config{MaxSnapshotIDs: maxIDs, LockWait: 2 * time.Second}}
	cfg.DB.PoolSize = 4
	inj.Wire(&cfg)
	w, err := pods.NewWorld(s, cfg, tables)
	if err != nil {
		return smp, err
	}
	f := &msFlight{s: s, w: w, pod: w.Pods[0], inj: inj, smp: &smp, fresh: claims.Get("MS-2", "freshness").Duration(),
		maxIDs: maxIDs, entries: map[authz.ID]*msEntry{}}
	for i := 1; i <= nChannels; i++ {
		f.channels = append(f.channels, channel(i))
	}
	type step struct {
		cell pods.FlowCall
		kind pods.FaultKind
	}
	var steps []step
	for _, c := range msCells() {
		for _, kind := range pods.FaultKinds {
			steps = append(steps, step{c, kind})
		}
	}
	r.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, sp := range steps {
		if err := f.fly(sp.cell, sp.kind); err != nil {
			return smp, err
		}
	}
	if err := f.badInput(); err != nil {
		return smp, err
	}
	if smp.Wrong > 0 {
		return smp, fmt.Errorf("MS-7: %d checks under faults answered or counted wrong; first: %s", smp.Wrong, smp.Witness)
	}
	return smp, nil
}

func (f *msFlight) counters() (map[string]int64, error) {
	return pods.Counters(f.pod.OC.Metrics(), f.pod.MS.Metrics(), f.pod.Relay.Metrics())
}

func (f *msFlight) judge(before, want map[string]int64, what string) error {
	after, err := f.counters()
	if err != nil {
		return err
	}
	if diff := pods.CounterDiff(before, after, want); len(diff) > 0 {
		f.smp.Wrongly(func() string { return fmt.Sprintf("%s: %s", what, strings.Join(diff, "; ")) })
	}
	return nil
}

// badInput flies the checks' refusals: a check with a zero ID fails with
// ErrZeroID and reads and counts nothing, and a cache or relay built
// without a runtime or pool, or with a configuration out of range, is an
// error (not a panic, not a relay with a missing cache).
func (f *msFlight) badInput() error {
	bg := context.Background()
	before, err := f.counters()
	if err != nil {
		return err
	}
	checkouts := f.w.DB.Stats().Checkouts
	var zero authz.ID
	for _, ids := range [][3]authz.ID{{zero, user(1), channel(1)}, {community, zero, channel(1)}, {community, user(1), zero}} {
		_, errI := f.pod.MS.IsMember(bg, ids[0], ids[1], ids[2])
		_, errS := f.pod.MS.Subscribe(bg, ids[0], ids[1], ids[2])
		for i, e := range []error{errI, errS} {
			f.smp.Of++
			if !errors.Is(e, membership.ErrZeroID) {
				f.smp.Wrongly(func() string {
					return fmt.Sprintf("check %d of %s/%s/%s: %v, want ErrZeroID", i, pods.Short(ids[0]), pods.Short(ids[1]), pods.Short(ids[2]), e)
				})
			}
		}
	}
	if n := f.w.DB.Stats().Checkouts - checkouts; n != 0 {
		f.smp.Wrongly(func() string { return fmt.Sprintf("checks with a zero ID checked out %d connections", n) })
	}
	if err := f.judge(before, map[string]int64{}, "checks with a zero ID"); err != nil {
		return err
	}
	// A request already cancelled: its context's error, from a warm user
	// (u1, loaded just before) as from a cold one (u2, dropped), counting
	// nothing and leaving nothing behind.
	if err := f.clean1(user(1)); err != nil {
		return err
	}
	f.drop(user(2))
	before, err = f.counters()
	if err != nil {
		return err
	}
	checkouts = f.w.DB.Stats().Checkouts
	done, cancel := f.s.WithCancel(bg)
	cancel()
	for _, u := range []authz.ID{user(1), user(2)} {
		_, errI := f.pod.MS.IsMember(done, community, u, channel(1))
		_, errS := f.pod.MS.Subscribe(done, community, u, channel(1))
		for i, e := range []error{errI, errS} {
			f.smp.Of++
			if !errors.Is(e, context.Canceled) {
				f.smp.Wrongly(func() string {
					return fmt.Sprintf("check %d of %s by a cancelled request: %v, want its context's error", i, pods.Short(u), e)
				})
			}
		}
	}
	if info, ok := f.pod.MS.Inspect(community, user(2)); ok {
		f.smp.Wrongly(func() string { return fmt.Sprintf("a cancelled request left a %s entry for a cold user", info.Kind) })
	}
	if n := f.w.DB.Stats().Checkouts - checkouts; n != 0 {
		f.smp.Wrongly(func() string { return fmt.Sprintf("checks with a cancelled context checked out %d connections", n) })
	}
	if err := f.judge(before, map[string]int64{}, "checks with a cancelled context"); err != nil {
		return err
	}
	builds := []struct {
		what string
		err  func() error
	}{
		{"membership.New without a runtime", func() error { _, err := membership.New(nil, f.w.Store, membership.Config{}); return err }},
		{"membership.New without a pool", func() error { _, err := membership.New(f.s, nil, membership.Config{}); return err }},
		{"relay.New without a pool", func() error { _, err := relay.New(f.s, nil, nil, relay.Config{}); return err }},
		{"relay.New with a negative Freshness", func() error {
			_, err := relay.New(f.s, f.w.Store, nil, relay.Config{MS: membership.Config{Freshness: -time.Second}})
			return err
		}},
		{"relay.New with a negative LockWait", func() error {
			_, err := relay.New(f.s, f.w.Store, nil, relay.Config{MS: membership.Config{LockWait: -time.Second}})
			return err
		}},
		{"relay.New with a negative MaxSnapshotIDs", func() error {
			_, err := relay.New(f.s, f.w.Store, nil, relay.Config{MS: membership.Config{MaxSnapshotIDs: -1}})
			return err
		}},
		{"relay.New with a budget below one snapshot", func() error {
			_, err := relay.New(f.s, f.w.Store, nil, relay.Config{MS: membership.Config{MaxSnapshotIDs: 8, BudgetBytes: membership.EntryWeight(membership.Snapshot, 8) - 1}})
			return err
		}},
	}
	for _, b := range builds {
		f.smp.Of++
		if err := b.err(); err == nil {
			f.smp.Wrongly(func() string { return b.what + ": no error" })
		}
	}
	return nil
}

// clean1 checks one channel of u with nothing injected, against the
// harness's account.
func (f *msFlight) clean1(u authz.ID) error {
	before, err := f.counters()
	if err != nil {
		return err
	}
	want := map[string]int64{}
	exp := f.check(u, channel(1), false, false, 0, want)
	got, gerr := f.pod.MS.IsMember(context.Background(), community, u, channel(1))
	f.smp.Of++
	if gerr != nil || got != exp {
		f.smp.Wrongly(func() string {
			return fmt.Sprintf("clean check of %s: %v (%v), the harness's account %v", pods.Short(u), got, gerr, exp)
		})
	}
	return f.judge(before, want, "clean check")
}

// drop resets u's entry, as an invalidation does.
func (f *msFlight) drop(u authz.ID) {
	f.pod.Relay.Invalidate(relay.MembershipChanged(community, u, f.channels[0]))
	delete(f.entries, u)
}

func (f *msFlight) truth(u, ch authz.ID) bool {
	return f.w.DB.State().IsActiveMember(community, u, ch)
}

// check is the harness's account of one IsMember of (u, ch) started now
// with no other request of u in flight: the counters it changes, the answer
// it must give when it succeeds, and its entry afterwards. failLoad: the
// load's read fails; failPoint: the point check fails; loadLat: the load's
// checkout and statement take that long.
func (f *msFlight) check(u, ch authz.ID, failLoad, failPoint bool, loadLat time.Duration, want map[string]int64) (answer bool) {
	now := f.s.Elapsed()
	e := f.entries[u]
	if e != nil && now >= e.expiry {
		e = nil
	}
	if e == nil {
		want[seriesMisses]++
		if failLoad {
			delete(f.entries, u)
			return false
		}
		t := f.w.DB.State()
		ids := t.MemberChannels(community, u, -1)
		e = &msEntry{kind: membership.Snapshot, ids: ids, expiry: now + loadLat + f.fresh}
		if len(ids) > f.maxIDs {
			e = &msEntry{kind: membership.PointChecks, expiry: now + loadLat + f.fresh}
		}
		f.entries[u] = e
		if e.kind == membership.Snapshot {
			return slices.Contains(e.ids, ch)
		}
	} else if e.kind == membership.Snapshot {
		want[seriesHits]++
		return slices.Contains(e.ids, ch)
	}
	want[seriesOversize]++
	_ = failPoint
	return f.truth(u, ch)
}

// fly runs one cell under one fault kind, then a clean check.
func (f *msFlight) fly(cell pods.FlowCall, kind pods.FaultKind) error {
	s, r := f.s, f.s.Rand()
	bg := context.Background()
	subscribe := strings.HasPrefix(cell.Flow, subscribePrefix) && cell.Flow != pathConfirm
	path := cell.Flow
	if subscribe {
		path = "membership." + strings.TrimPrefix(cell.Flow, subscribePrefix)
	}
	u1, u2, u3 := user(1), user(2), user(3)
	var u authz.ID
	nth := 1
	switch path {
	case pathLoad, pathWaitTimeout:
		u = u1
	case pathLoadOver:
		u = u2
		if cell.Call == pods.CallAcquire {
			nth = 2 // the load's checkout comes first
		}
	case pathMarker:
		u = u2
	case pathConfirm:
		u = u3
	default:
		f.smp.Wrongly(func() string { return fmt.Sprintf("no driver for MS flow %s: fly it here", cell.Flow) })
		return nil
	}
	ch := f.channels[r.IntN(len(f.channels))]
	f.drop(u)
	clean := func(what string) error {
		before, err := f.counters()
		if err != nil {
			return err
		}
		want := map[string]int64{}
		c := f.channels[r.IntN(len(f.channels))]
		exp := f.check(u, c, false, false, 0, want)
		got, gerr := f.pod.MS.IsMember(bg, community, u, c)
		f.smp.Of++
		if gerr != nil || got != exp {
			f.smp.Wrongly(func() string {
				return fmt.Sprintf("%s: clean check %s/%s at +%v: %v (%v), the harness's account %v", what, pods.Short(u), pods.Short(c), s.Elapsed(), got, gerr, exp)
			})
		}
		return f.judge(before, want, what+": clean check")
	}
	switch path {
	case pathMarker:
		if err := clean("warm-up"); err != nil { // loads the marker
			return err
		}
	case pathConfirm:
		// Keep the subscriber in one channel before the grant below, so
		// that it stays under the snapshot cap.
		if ids := f.w.DB.State().MemberChannels(community, u, -1); len(ids) > 1 {
			if _, err := f.w.DB.Write(bg, "revoke", func(t *authztest.Tables) {
				for _, c := range ids[1:] {
					_ = t.SetMember(u, c, false)
				}
			}); err != nil {
				return err
			}
		}
		if err := clean("warm-up"); err != nil { // loads the snapshot
			return err
		}
		// A channel the snapshot lacks; half the time granted since,
		// without an invalidation, so the confirmation finds a member.
		var lacks []authz.ID
		for _, c := range f.channels {
			if !slices.Contains(f.entries[u].ids, c) {
				lacks = append(lacks, c)
			}
		}
		if len(lacks) == 0 || len(f.entries[u].ids) >= f.maxIDs {
			f.smp.Wrongly(func() string { return "the confirming flow's user has no channel left to grant" })
			return nil
		}
		ch = lacks[r.IntN(len(lacks))]
		if r.IntN(2) == 0 {
			if _, err := f.w.DB.Write(bg, "grant without invalidation", func(t *authztest.Tables) { _ = t.SetMember(u, ch, true) }); err != nil {
				return err
			}
		}
	}

	ctx, cancel := s.WithCancel(bg)
	defer cancel()
	slow := 200*time.Millisecond + time.Duration(r.Int64N(int64(1800*time.Millisecond)))
	before, err := f.counters()
	if err != nil {
		return err
	}
	want := map[string]int64{}
	failed := kind != pods.FaultSlow
	var loader rt.WaitGroup
	var loaderWrong string
	if path == pathWaitTimeout {
		// Another request's load of u, slower than LockWait: the check
		// under test waits for it, gives up, and asks the database.
		lockWait := f.pod.MS.Config().LockWait
		f.inj.Arm(&pods.Arm{Call: "authz.Conn.ActiveMemberships", Nth: 1, Kind: pods.FaultSlow, Slow: lockWait + time.Second + time.Duration(r.Int64N(int64(time.Second)))})
		lc := f.channels[r.IntN(len(f.channels))]
		lexp := f.check(u, lc, false, false, 0, want)
		loader = s.NewWaitGroup("loader")
		loader.Add(1)
		s.Go("loader", func() {
			defer loader.Done()
			got, err := f.pod.MS.IsMember(bg, community, u, lc)
			if err != nil || got != lexp {
				loaderWrong = fmt.Sprintf("the slow loader's check %s/%s: %v (%v), truth %v", pods.Short(u), pods.Short(lc), got, err, lexp)
			}
		})
		_ = s.Sleep(bg, time.Duration(1+r.IntN(50))*time.Millisecond)
	}
	arm := f.inj.Arm(&pods.Arm{Call: cell.Call, Nth: nth, Kind: kind, Slow: slow, Cancel: cancel})
	t0 := s.Elapsed()
	var exp bool
	switch path {
	case pathLoad:
		lat := time.Duration(0)
		if !failed && cell.Call == pods.CallAcquire {
			lat = slow // freshness counts from the checkout
		}
		exp = f.check(u, ch, failed, false, lat, want)
	case pathLoadOver, pathMarker:
		exp = f.check(u, ch, false, failed, 0, want)
	case pathWaitTimeout:
		want[seriesWaitTimeout]++
		exp = f.truth(u, ch)
	case pathConfirm:
		exp = f.check(u, ch, false, false, 0, want) // a hit: the snapshot lacks ch
	}
	var got bool
	var gerr error
	if subscribe || path == pathConfirm {
		got, gerr = f.pod.MS.Subscribe(ctx, community, u, ch)
		// Subscribe confirms a denial that did not fail.
		if !exp && !(failed && path != pathConfirm) {
			want[seriesConfirms]++
			exp = f.truth(u, ch)
			if exp && !failed {
				want[seriesConfirmed]++
				delete(f.entries, u) // the stale snapshot is dropped
			}
		}
	} else {
		got, gerr = f.pod.MS.IsMember(ctx, community, u, ch)
	}
	took := s.Elapsed() - t0
	if loader != nil {
		_ = loader.Wait(bg)
		if loaderWrong != "" {
			f.smp.Wrongly(func() string { return loaderWrong })
		}
	}
	f.inj.Disarm()
	what := fmt.Sprintf("%s %s/%s at +%v under %s of %s", map[bool]string{true: "subscribe", false: "is-member"}[subscribe || path == pathConfirm], pods.Short(u), pods.Short(ch), t0, kind, cell)
	effect := arm.Fired()
	switch kind {
	case pods.FaultError:
		effect = effect && errors.Is(gerr, pods.ErrInjected)
	case pods.FaultCancel:
		effect = effect && errors.Is(gerr, context.Canceled) && !errors.Is(gerr, pods.ErrInjected)
	case pods.FaultSlow:
		effect = effect && gerr == nil && took >= slow
	}
	f.smp.Of++
	if !effect {
		f.smp.Wrongly(func() string {
			return fmt.Sprintf("%s: fault fired %v, the check returned %v (%v) after %v", what, arm.Fired(), got, gerr, took)
		})
	} else {
		s.Probe(pods.FaultProbe(cell, kind))
	}
	if kind == pods.FaultSlow && got != exp {
		f.smp.Wrongly(func() string { return fmt.Sprintf("%s: answered %v, the harness's account %v", what, got, exp) })
	}
	if err := f.judge(before, want, what); err != nil {
		return err
	}
	return clean(what)
}

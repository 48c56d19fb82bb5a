package oc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC9_EveryFlowUnderFaults flies every OC cell of pods.Flows (each
// lookup flow of impl/accesschannels × each database call it makes) under
// each fault kind: the call fails, the caller's context is cancelled
// during it, or it answers late. Each seed flies every cell under every
// kind, in a random order, from a random cache state (cold, member half
// dropped, open set aged), on one pod with a clean database otherwise.
// After each faulted lookup and after a clean lookup that follows it, the
// answer (OC-1: the error the fault caused, or the tables' union) and every
// counter of the pod (OC-9, the relay's and the membership cache's
// included) must match the harness's own account of the two halves. A
// failed read caches nothing and counts one miss of its half, and the
// other half is not read after a member-half failure. The probes require
// every cell × kind to have been injected and its effect seen.
func TestOC9_EveryFlowUnderFaults(t *testing.T) {
	probes := pods.FaultProbes(ocCells())
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-9", Options: simtest.Options{Seeds: 3},
		Fly:    flyOCFaults,
		Probes: probes,
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d faulted or following lookups with a wrong answer or counter, over %d cells x %d fault kinds", o.Wrong, o.Of, len(ocCells()), len(pods.FaultKinds))
		},
		Note: "one pod; every OC flow x call of pods.Flows under an error, a cancellation and a slow answer; counters compared with the harness's account after each lookup",
	})
}

func ocCells() []pods.FlowCall { return pods.CellsOf("OC") }

// ocState is the harness's account of the pod's two halves for the one
// (community, reader) the check reads.
type ocState struct {
	member       bool
	memberExpiry time.Duration // insertion + TTL
	open         bool
	openStart    time.Duration // the start of the read that filled it
	openExpiry   time.Duration // insertion + TTL
}

// lookupFault is what the harness expects of one lookup: the half whose
// read fails (or "" when none), and the slow latency of each half's read.
type lookupFault struct {
	failHalf           string
	memberLat, openLat time.Duration
}

// lookup applies one cached lookup invoked at t0 to the account and returns
// the counter changes it must cause.
func (st *ocState) lookup(t0 time.Duration, f lookupFault, maxAge, ttl time.Duration) map[string]int64 {
	want := map[string]int64{}
	t1 := t0
	if st.member && t0 < st.memberExpiry {
		want[seriesMemberHits]++
	} else {
		st.member = false
		want[seriesMemberMisses]++
		if f.failHalf == "member" {
			return want
		}
		t1 = t0 + f.memberLat
		st.member, st.memberExpiry = true, t1+ttl
	}
	if st.open && t1 >= st.openExpiry {
		st.open = false
	}
	switch {
	case st.open && t1 < st.openStart+maxAge:
		want[seriesOpenHits]++
		return want
	case st.open:
		want[seriesOpenExpired]++
	default:
		want[seriesOpenAbsent]++
	}
	if f.failHalf == "open" {
		return want
	}
	st.open, st.openStart, st.openExpiry = true, t1, t1+f.openLat+ttl
	return want
}

func flyOCFaults(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
	var smp claims.Sample
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	ttl := claims.Get("OC-7", "member ttl").Duration()
	r := s.Rand()
	k, reader := authz.NewID('k', 1), authz.NewID('r', 1)
	tables := authztest.NewTables()
	var channels []authz.ID
	for i := 1; i <= 8; i++ {
		ch := authz.NewID('h', uint64(i))
		channels = append(channels, ch)
		open := r.IntN(2) == 0
		if err := tables.AddChannel(authztest.Channel{ID: ch, Community: k, Open: open, Listed: open && r.IntN(4) > 0}); err != nil {
			return smp, err
		}
		if r.IntN(2) == 0 {
			if err := tables.SetMember(reader, ch, true); err != nil {
				return smp, err
			}
		}
	}
	inj := pods.NewInjector(s)
	cfg := pods.Config{Pods: 1, Bus: simbus.Config{Faults: simbus.Reliable()}}
	cfg.DB.PoolSize = 4
	inj.Wire(&cfg)
	w, err := pods.NewWorld(s, cfg, tables)
	if err != nil {
		return smp, err
	}
	pod := w.Pods[0]
	bg := context.Background()

	type step struct {
		cell pods.FlowCall
		kind pods.FaultKind
	}
	var steps []step
	for _, c := range ocCells() {
		for _, kind := range pods.FaultKinds {
			steps = append(steps, step{c, kind})
		}
	}
	r.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })

	var st ocState
	for _, sp := range steps {
		op, half := ocFlowOf(sp.cell.Flow)
		if op == "" {
			smp.Wrongly(func() string { return fmt.Sprintf("no driver for OC flow %s: fly it here", sp.cell.Flow) })
			continue
		}
		// The state the lookup starts from: cold; the member half dropped
		// (open set warm); or an open set past its max age (member warm).
		pod.Relay.Invalidate(relay.AccessibleChanged(k))
		st = ocState{}
		warm := func() error {
			t0 := s.Elapsed()
			before, err := pods.Counters(pod.OC.Metrics(), pod.MS.Metrics(), pod.Relay.Metrics())
			if err != nil {
				return err
			}
			var res ocAnswer
			res.ids, res.err = pod.OC.Accessible(bg, k, reader)
			want := st.lookup(t0, lookupFault{}, maxAge, ttl)
			what := fmt.Sprintf("clean lookup at +%v", t0)
			smp.Of++
			judgeOCAnswer(&smp, what, "accessible", res, w.DB.State(), k, reader, authz.ID{})
			return judgeCounters(&smp, before, want, what, pod)
		}
		// A member-half cell needs the member half to miss, an open-half
		// cell the open set to miss.
		switch start := r.IntN(3); {
		case start == 1 && half != "open":
			if err := warm(); err != nil {
				return smp, err
			}
			pod.Relay.Invalidate(relay.MembershipChanged(k, reader, channels[0]))
			st.member = false
		case start == 2 && half != "member":
			if err := warm(); err != nil {
				return smp, err
			}
			_ = s.Sleep(bg, maxAge+time.Duration(r.Int64N(int64(maxAge))))
		}

		// The fault: on which call of the lookup it lands.
		ctx, cancel := s.WithCancel(bg)
		nth := 1
		lf := lookupFault{failHalf: half}
		if half == "open" && sp.cell.Call == pods.CallAcquire && !(st.member && s.Elapsed() < st.memberExpiry) {
			nth = 2 // the member half's read acquires first
		}
		slow := 200*time.Millisecond + time.Duration(r.Int64N(int64(1800*time.Millisecond)))
		if d := slow - maxAge; d > -50*time.Millisecond && d < 50*time.Millisecond {
			slow += 100 * time.Millisecond // clear of the max age, where the account cannot tell
		}
		arm := inj.Arm(&pods.Arm{Call: sp.cell.Call, Nth: nth, Kind: sp.kind, Slow: slow, Cancel: cancel})
		if sp.kind == pods.FaultSlow {
			lf.failHalf = ""
			if half == "member" {
				lf.memberLat = slow
			} else {
				lf.openLat = slow
			}
		}
		channel := channels[r.IntN(len(channels))]
		before, err := pods.Counters(pod.OC.Metrics(), pod.MS.Metrics(), pod.Relay.Metrics())
		if err != nil {
			return smp, err
		}
		t0 := s.Elapsed()
		var res ocAnswer
		want := map[string]int64{}
		switch op {
		case "accessible":
			res.ids, res.err = pod.OC.Accessible(ctx, k, reader)
			want = st.lookup(t0, lf, maxAge, ttl)
		case "granted":
			res.granted, res.err = pod.OC.Granted(ctx, k, reader, channel)
			want = st.lookup(t0, lf, maxAge, ttl)
		case "uncached":
			res.ids, res.err = pod.OC.AccessibleUncached(ctx, k, reader)
		}
		took := s.Elapsed() - t0
		inj.Disarm()
		cancel()
		what := fmt.Sprintf("%s at +%v under %s of %s", op, t0, sp.kind, sp.cell)
		effect := arm.Fired()
		switch sp.kind {
		case pods.FaultError:
			effect = effect && errors.Is(res.err, pods.ErrInjected)
		case pods.FaultCancel:
			effect = effect && errors.Is(res.err, context.Canceled) && !errors.Is(res.err, pods.ErrInjected)
		case pods.FaultSlow:
			effect = effect && res.err == nil && took >= slow
		}
		if !effect {
			smp.Wrongly(func() string {
				return fmt.Sprintf("%s: fault fired %v, the lookup returned %v after %v", what, arm.Fired(), res.err, took)
			})
		} else {
			s.Probe(pods.FaultProbe(sp.cell, sp.kind))
		}
		smp.Of++
		if sp.kind == pods.FaultSlow {
			judgeOCAnswer(&smp, what, op, res, w.DB.State(), k, reader, channel)
		}
		if err := judgeCounters(&smp, before, want, what, pod); err != nil {
			return smp, err
		}
		// A clean lookup right after: what the faulted one left behind.
		if err := warm(); err != nil {
			return smp, err
		}
	}
	if err := badInput(s, w, &smp, k, reader, channels[0]); err != nil {
		return smp, err
	}
	if smp.Wrong > 0 {
		return smp, fmt.Errorf("OC-9: %d lookups under faults answered or counted wrong; first: %s", smp.Wrong, smp.Witness)
	}
	return smp, nil
}

// badInput flies the flows' refusals: a lookup with a zero ID fails with
// ErrZeroID and reads and counts nothing, a change announced with an
// invalid message is an error that publishes and counts nothing, and a
// cache or relay built
// without a runtime or pool, or with a configuration out of range, is an
// error (not a panic, not a relay with a missing cache).
func badInput(s *sim.Sim, w *pods.World, smp *claims.Sample, k, reader, channel authz.ID) error {
	pod := w.Pods[0]
	bg := context.Background()
	before, err := pods.Counters(pod.OC.Metrics(), pod.MS.Metrics(), pod.Relay.Metrics())
	if err != nil {
		return err
	}
	checkouts := w.DB.Stats().Checkouts
	var zero authz.ID
	for _, ids := range [][3]authz.ID{{zero, reader, channel}, {k, zero, channel}, {k, reader, zero}} {
		_, err := pod.OC.Granted(bg, ids[0], ids[1], ids[2])
		errs := []error{err}
		if !ids[2].IsZero() { // Accessible takes no channel
			_, errA := pod.OC.Accessible(bg, ids[0], ids[1])
			_, errU := pod.OC.AccessibleUncached(bg, ids[0], ids[1])
			errs = append(errs, errA, errU)
		}
		for i, e := range errs {
			smp.Of++
			if !errors.Is(e, accesschannels.ErrZeroID) {
				smp.Wrongly(func() string {
					return fmt.Sprintf("lookup %d of %s/%s/%s: %v, want ErrZeroID", i, pods.Short(ids[0]), pods.Short(ids[1]), pods.Short(ids[2]), e)
				})
			}
		}
	}
	if n := w.DB.Stats().Checkouts - checkouts; n != 0 {
		smp.Wrongly(func() string { return fmt.Sprintf("lookups with a zero ID checked out %d connections", n) })
	}
	if err := judgeCounters(smp, before, map[string]int64{}, "lookups with a zero ID", pod); err != nil {
		return err
	}
	published := w.Bus.Published()
	for _, m := range []authz.Message{
		{Kind: "bogus", CommunityID: k},
		{Kind: authz.KindMembership, CommunityID: k, ChannelID: channel},
		{Kind: authz.KindVisibility, ChannelID: channel},
	} {
		smp.Of++
		if err := pod.Relay.Changed(bg, m); err == nil {
			smp.Wrongly(func() string { return fmt.Sprintf("relay.Changed with the invalid message %+v: no error", m) })
		}
	}
	if n := w.Bus.Published() - published; n != 0 {
		smp.Wrongly(func() string { return fmt.Sprintf("relay.Changed with invalid messages published %d of them", n) })
	}
	if err := judgeCounters(smp, before, map[string]int64{}, "relay.Changed with invalid messages", pod); err != nil {
		return err
	}
	builds := []struct {
		what string
		err  func() error
	}{
		{"accesschannels.New without a runtime", func() error { _, err := accesschannels.New(nil, w.Store, accesschannels.Config{}); return err }},
		{"accesschannels.New without a pool", func() error { _, err := accesschannels.New(s, nil, accesschannels.Config{}); return err }},
		{"relay.New without a runtime", func() error { _, err := relay.New(nil, w.Store, nil, relay.Config{}); return err }},
		{"relay.New with MaxAgeOpen above TTL", func() error {
			_, err := relay.New(s, w.Store, nil, relay.Config{OC: accesschannels.Config{MaxAgeOpen: 2 * time.Second, TTL: time.Second}})
			return err
		}},
		{"relay.New with a negative MaxAgeOpen", func() error {
			_, err := relay.New(s, w.Store, nil, relay.Config{OC: accesschannels.Config{MaxAgeOpen: -time.Second}})
			return err
		}},
	}
	for _, b := range builds {
		smp.Of++
		if err := b.err(); err == nil {
			smp.Wrongly(func() string { return b.what + ": no error" })
		}
	}
	// The edge of what is refused is accepted: an open set served for as
	// long as the TTL still bounds it, the claims' two windows at one.
	smp.Of++
	if _, err := relay.New(s, w.Store, nil, relay.Config{OC: accesschannels.Config{MaxAgeOpen: time.Second, TTL: time.Second}}); err != nil {
		smp.Wrongly(func() string { return "relay.New with MaxAgeOpen equal to TTL: " + err.Error() })
	}
	return nil
}

// ocAnswer is a lookup's answer.
type ocAnswer struct {
	ids     []authz.ID
	granted bool
	err     error
}

// judgeOCAnswer compares a lookup that must have succeeded with the tables
// (OC-1).
func judgeOCAnswer(smp *claims.Sample, what, op string, a ocAnswer, t *authztest.Tables, k, reader, channel authz.ID) {
	if a.err != nil {
		smp.Wrongly(func() string { return fmt.Sprintf("%s: failed: %v", what, a.err) })
		return
	}
	if op == "granted" {
		if want := t.Accessible(k, reader, channel); a.granted != want {
			smp.Wrongly(func() string { return fmt.Sprintf("%s: granted %v, the tables say %v", what, a.granted, want) })
		}
		return
	}
	if want := expectedAccessible(t, k, reader); !slices.Equal(a.ids, want) {
		smp.Wrongly(func() string { return fmt.Sprintf("%s: %s, the tables say %s", what, shortIDs(a.ids), shortIDs(want)) })
	}
}

// judgeCounters compares every counter of pod (both caches and the relay)
// with the harness's account of one operation.
func judgeCounters(smp *claims.Sample, before, want map[string]int64, what string, pod *pods.Pod) error {
	after, err := pods.Counters(pod.OC.Metrics(), pod.MS.Metrics(), pod.Relay.Metrics())
	if err != nil {
		return err
	}
	if diff := pods.CounterDiff(before, after, want); len(diff) > 0 {
		smp.Wrongly(func() string { return fmt.Sprintf("%s: %s", what, strings.Join(diff, "; ")) })
	}
	return nil
}

// ocFlowOf names the operation a flow starts from and the half it reads
// ("" for the uncached read).
func ocFlowOf(flow string) (op, half string) {
	switch {
	case strings.HasPrefix(flow, "accesschannels.Cache.AccessibleUncached"):
		op = "uncached"
	case strings.HasPrefix(flow, "accesschannels.Cache.Accessible>"):
		op = "accessible"
	case strings.HasPrefix(flow, "accesschannels.Cache.Granted>"):
		op = "granted"
	default:
		return "", ""
	}
	switch {
	case strings.Contains(flow, "memberHalf"):
		half = "member"
	case strings.Contains(flow, "openHalf"):
		half = "open"
	}
	return op, half
}

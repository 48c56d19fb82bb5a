package oc

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
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC1_UnionMatchesUncached checks OC-1: accessible(reader) = the
// reader's member channels ∪ the community's listed open channels, and the
// cached answer equals the uncached one, and Granted answers the same
// union for every channel. Differential, with reliable
// invalidation and no write concurrent with the reads: rounds of a few
// writes, then every reader (including readers with no member channel at
// all) asks a random pod, which must answer exactly the uncached union and
// exactly what the tables say.
func TestOC1_UnionMatchesUncached(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-1", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return flyUnion(s, false) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d cached answers (Accessible, and Granted for every channel) differ from the uncached union and the tables", o.Wrong, o.Of)
		},
		Note: "readers include members, open-only readers, and a reader with no membership at all",
	})
}

// TestOC1_UnionUnderReadFailures checks OC-1 where reads fail: the same
// rounds as TestOC1_UnionMatchesUncached, with one database read in five
// failing (a transient error) and memberships granted in open channels
// too, so that a channel can be in both halves of a reader's answer. A
// lookup may fail, with the database's error; one that answers must answer
// exactly the tables' union, whatever failed before it: a failed read
// leaves nothing behind that a later answer would trust.
func TestOC1_UnionUnderReadFailures(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-1", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return flyUnion(s, true) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d answers (Accessible, and Granted for every channel) given while one read in five failed differ from the tables (%d lookups failed, with the database's error)", o.Wrong, o.Of, o.Tally["failed"])
		},
		Probes: []claims.Probe{
			{Name: "oc/answer-after-a-failed-read", What: "a reader's lookup answered after one of its reads had failed", Min: 5000},
			{Name: "oc/channel-in-both-halves", What: "an answer with a channel the reader is a member of and that is listed open", Min: 50},
		},
	})
}

// flyUnion is OC-1's differential: rounds of a few writes, then every
// reader (including readers with no member channel at all) asks a random
// pod, which must answer exactly the uncached union and exactly what the
// tables say, for the whole set (Accessible) and for every channel
// (Granted). With failures, one read in five fails, lookups may fail with
// the database's error, and the uncached union is asked only when both
// lookups answered; memberships are then granted in open channels too.
func flyUnion(s *sim.Sim, failures bool) (claims.Sample, error) {
	smp := claims.Sample{Tally: map[string]int64{}}
	ctx := context.Background()
	c := pods.DefaultChurn()
	tables, err := c.Tables()
	if err != nil {
		return smp, err
	}
	db := simdb.Config{Latency: simdb.DefaultLatency}
	grantable := c.PrivateChannels
	if failures {
		db.ReadErrorProb = 0.2
		grantable = append(slices.Clone(c.PrivateChannels), c.OpenChannels...)
	}
	w, err := pods.NewWorld(s, pods.Config{Pods: 2, DB: db, Bus: simbus.Config{Faults: simbus.Reliable()}}, tables)
	if err != nil {
		return smp, err
	}
	readers := append(slices.Clone(c.NonMembers), c.Members...)
	readers = append(readers, authz.NewID('z', 1)) // never a member of anything
	failedBefore := map[authz.ID]bool{}
	// lookupFailed judges an error: none is expected without failures,
	// and with them only the database's own.
	lookupFailed := func(err error) bool {
		if err == nil {
			return false
		}
		var te *simdb.TransientError
		if !failures || !errors.As(err, &te) {
			s.Failf("OC-1: lookup failed with %v", err)
		}
		smp.Tally["failed"]++
		return true
	}
	for round := range 15 {
		for range 1 + s.Rand().IntN(3) {
			pod := w.Pods[s.Rand().IntN(len(w.Pods))]
			if s.Rand().IntN(2) == 0 {
				ch := c.OpenChannels[s.Rand().IntN(len(c.OpenChannels))]
				change := []pods.Change{pods.MakePrivate, pods.Unlist, pods.MakeOpen, pods.List, pods.Delete}[s.Rand().IntN(5)]
				_ = w.Write(ctx, pod, -1, change, c.Community, authz.ID{}, ch)
			} else {
				change := []pods.Change{pods.GrantMember, pods.RemoveMember}[s.Rand().IntN(2)]
				_ = w.Write(ctx, pod, -1, change, c.Community, readers[s.Rand().IntN(len(readers))], grantable[s.Rand().IntN(len(grantable))])
			}
		}
		_ = s.Sleep(ctx, 50*time.Millisecond) // the bus delivers the invalidations
		wg := s.NewWaitGroup("readers")
		wg.Add(len(readers))
		for i, r := range readers {
			s.Go(fmt.Sprintf("reader%d", i), func() {
				defer wg.Done()
				pod := w.Pods[s.Rand().IntN(len(w.Pods))]
				want := expectedAccessible(w.DB.State(), c.Community, r)
				judge := func(what string, ok bool, got string) {
					smp.Of++
					if failedBefore[r] {
						s.Probe("oc/answer-after-a-failed-read")
					}
					if !ok {
						smp.Wrongly(func() string {
							return fmt.Sprintf("round %d, reader %s on %s: %s %s, the tables %s", round, pods.Short(r), pod.Name, what, got, shortIDs(want))
						})
					}
				}
				cached, err1 := pod.OC.Accessible(ctx, c.Community, r)
				if lookupFailed(err1) {
					failedBefore[r] = true
				} else {
					judge("Accessible", slices.Equal(cached, want), shortIDs(cached))
					open := w.DB.State().ListedOpenChannels(c.Community)
					if slices.ContainsFunc(w.DB.State().MemberChannels(c.Community, r, -1), func(ch authz.ID) bool { return slices.Contains(open, ch) }) {
						s.Probe("oc/channel-in-both-halves")
					}
					uncached, err2 := pod.OC.AccessibleUncached(ctx, c.Community, r)
					if !lookupFailed(err2) {
						judge("uncached", slices.Equal(cached, uncached), shortIDs(uncached))
					}
				}
				// Granted is the same union asked one channel at a time:
				// every channel of the tables, granted or not.
				for _, ch := range w.DB.State().ChannelIDs() {
					granted, err := pod.OC.Granted(ctx, c.Community, r, ch)
					if lookupFailed(err) {
						failedBefore[r] = true
						continue
					}
					judge("Granted("+pods.Short(ch)+")", granted == slices.Contains(want, ch), fmt.Sprint(granted))
				}
			})
		}
		_ = wg.Wait(ctx)
		_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(1500*time.Millisecond))))
	}
	if smp.Wrong > 0 {
		return smp, fmt.Errorf("OC-1: %d answers differ from the tables or the uncached union; first: %s", smp.Wrong, smp.Witness)
	}
	return smp, nil
}

// expectedAccessible is the truth: every channel of community the reader
// may access according to the tables, sorted as the cache sorts.
func expectedAccessible(t *authztest.Tables, community, reader authz.ID) []authz.ID {
	var out []authz.ID
	for _, id := range t.ChannelIDs() {
		if t.Accessible(community, reader, id) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, authz.Compare)
	return out
}

func shortIDs(ids []authz.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = pods.Short(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

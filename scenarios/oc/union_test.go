package oc

import (
	"context"
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
		Claim: "OC-1", Seeds: 20,
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			ctx := context.Background()
			c := pods.DefaultChurn()
			tables, err := c.Tables()
			if err != nil {
				return smp, err
			}
			w, err := pods.NewWorld(s, pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency},
				Bus: simbus.Config{Faults: simbus.Reliable()}}, tables)
			if err != nil {
				return smp, err
			}
			readers := append(slices.Clone(c.NonMembers), c.Members...)
			readers = append(readers, authz.NewID('z', 1)) // never a member of anything
			for round := range 15 {
				for range 1 + s.Rand().IntN(3) {
					pod := w.Pods[s.Rand().IntN(len(w.Pods))]
					if s.Rand().IntN(2) == 0 {
						ch := c.OpenChannels[s.Rand().IntN(len(c.OpenChannels))]
						change := []pods.Change{pods.MakePrivate, pods.Unlist, pods.MakeOpen, pods.List, pods.Delete}[s.Rand().IntN(5)]
						_ = w.Write(ctx, pod, -1, change, c.Community, authz.ID{}, ch)
					} else {
						change := []pods.Change{pods.GrantMember, pods.RemoveMember}[s.Rand().IntN(2)]
						_ = w.Write(ctx, pod, -1, change, c.Community, readers[s.Rand().IntN(len(readers))], c.PrivateChannels[s.Rand().IntN(len(c.PrivateChannels))])
					}
				}
				_ = s.Sleep(ctx, 50*time.Millisecond) // the bus delivers the invalidations
				wg := s.NewWaitGroup("readers")
				wg.Add(len(readers))
				for i, r := range readers {
					s.Go(fmt.Sprintf("reader%d", i), func() {
						defer wg.Done()
						pod := w.Pods[s.Rand().IntN(len(w.Pods))]
						cached, err1 := pod.OC.Accessible(ctx, c.Community, r)
						uncached, err2 := pod.OC.AccessibleUncached(ctx, c.Community, r)
						if err1 != nil || err2 != nil {
							s.Failf("OC-1: lookup failed without faults: %v / %v", err1, err2)
						}
						want := expectedAccessible(w.DB.State(), c.Community, r)
						smp.Of++
						if !slices.Equal(cached, uncached) || !slices.Equal(cached, want) {
							smp.Wrongly(func() string {
								return fmt.Sprintf("round %d, reader %s on %s: cached %s, uncached %s, tables %s",
									round, pods.Short(r), pod.Name, shortIDs(cached), shortIDs(uncached), shortIDs(want))
							})
						}
						// Granted is the same union asked one channel at a
						// time: every channel of the tables, granted or not.
						for _, ch := range w.DB.State().ChannelIDs() {
							granted, err := pod.OC.Granted(ctx, c.Community, r, ch)
							smp.Of++
							if want := slices.Contains(want, ch); err != nil || granted != want {
								smp.Wrongly(func() string {
									return fmt.Sprintf("round %d, reader %s on %s: Granted(%s) = %v (%v), the tables say %v",
										round, pods.Short(r), pod.Name, pods.Short(ch), granted, err, want)
								})
							}
						}
					})
				}
				_ = wg.Wait(ctx)
				_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(1500*time.Millisecond))))
			}
			if smp.Wrong > 0 {
				return smp, fmt.Errorf("OC-1: %d cached answers differ from the uncached union; first: %s", smp.Wrong, smp.Witness)
			}
			return smp, nil
		},
		Sample: func(r claims.Sample) claims.Sample { return r },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d cached answers (Accessible, and Granted for every channel) differ from the uncached union and the tables", o.Wrong, o.Of)
		},
		Note: func(claims.Outcome) string {
			return "readers include members, open-only readers, and a reader with no membership at all"
		},
	})
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

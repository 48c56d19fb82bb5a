package oc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// probeLateJoin: a new reader asked for the open set once the read in
// flight was older than the max age, while it still ran.
const probeLateJoin = "oc/asked-while-an-older-read-ran"

// TestOC2_SlowReadIsNotJoinedLate checks OC-2 where the open-set read is
// slower than the window. A reader who asks while a read is in flight may
// wait for it only while that read is younger than the max age: its answer
// is then as old as the read. One who asks later must read anew, or its
// grant is stale by as much as it asked after the read began. The races of
// TestOC2_RaceToTheBound probe once the read has ended, and their reads
// take less than the window, so they never show a reader joining an old
// read. Here, on the pod that loses every invalidation, a cold read takes
// two to three windows; a revocation (a seeded kind) commits right after
// its snapshot; and new non-member readers ask from inside the window to
// past it while the read still runs, each on a task of its own.
func TestOC2_SlowReadIsNotJoinedLate(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-2", Bound: "open set max age", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			w, k, err := openRaceWorld(s, false, 1)
			if err != nil {
				return claims.Sample{}, err
			}
			if err := slowReadRace(s, w, k, b.Duration(), revocations[s.Rand().IntN(len(revocations))]); err != nil {
				return claims.Sample{}, err
			}
			return nonMemberGrants(w, b)
		},
		Measured: staleMeasured("grant-staleness of non-member reads asking while a read slower than the window ran"),
		Probes:   []claims.Probe{{Name: probeLateJoin, What: "a reader asked while a read older than the max age still ran", Min: 30}},
		Note:     "two pods, the reading pod loses every invalidation; its cold open-set read takes 2-3x the bound, the revocation commits at its snapshot; readers ask at 0.5x to past 1x the bound while it runs",
	})
}

// slowReadRace is a pods.Race with probes WhileReading: a cold open-set
// read on the reading pod takes two to three times bound, kind commits
// right after its snapshot, and new non-member readers ask at offsets from
// that snapshot, inside and past the window, while the read runs.
func slowReadRace(s *sim.Sim, w *pods.World, k authz.ID, bound time.Duration, kind pods.Change) error {
	ch := authz.NewID('o', 1)
	latency := 2*bound + time.Duration(s.Rand().Int64N(int64(bound)))
	offsets := []time.Duration{bound / 2, bound - bound/100, bound - time.Nanosecond, bound, bound + time.Nanosecond,
		bound + bound/100, bound + bound/10, bound + bound/2, latency - bound/10}
	readers := make([]authz.ID, len(offsets))
	for i := range readers {
		readers[i] = authz.NewID('r', uint64(i+2))
	}
	r, err := openSetRace(w, k, ch, kind, latency, offsets, authz.NewID('r', 1), readers)
	if err != nil {
		return err
	}
	r.WhileReading = true
	res, err := w.Race(context.Background(), r)
	if err != nil {
		return fmt.Errorf("%s race: %w", kind, err)
	}
	for _, at := range res.Probed {
		if at-res.Snapshot >= bound && at < res.Snapshot+latency {
			s.Probe(probeLateJoin)
		}
	}
	return nil
}

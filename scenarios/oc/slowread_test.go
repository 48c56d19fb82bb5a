package oc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
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
		Claim: "OC-2", Bound: "open set max age", Seeds: 10,
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
		Sample:   func(r claims.Sample) claims.Sample { return r },
		Measured: staleMeasured("grant-staleness of non-member reads asking while a read slower than the window ran"),
		Probes:   []claims.Probe{{Name: probeLateJoin, What: "a reader asked while a read older than the max age still ran", Min: 30}},
		Note: func(claims.Outcome) string {
			return "two pods, the reading pod loses every invalidation; its cold open-set read takes 2-3x the bound, the revocation commits at its snapshot; readers ask at 0.5x to past 1x the bound while it runs"
		},
	})
}

// slowReadRace primes a cold open-set read on the reading pod that takes
// two to three times bound, commits kind right after its snapshot, and has
// new non-member readers ask at offsets from that snapshot, inside and past
// the window, each on its own task, while the read runs.
func slowReadRace(s *sim.Sim, w *pods.World, k authz.ID, bound time.Duration, kind pods.Change) error {
	ctx := context.Background()
	reader, writer := w.Pods[len(w.Pods)-1], w.Pods[0]
	ch := authz.NewID('o', 1)
	latency := 2*bound + time.Duration(s.Rand().Int64N(int64(bound)))
	offsets := []time.Duration{bound / 2, bound - bound/100, bound - time.Nanosecond, bound, bound + time.Nanosecond,
		bound + bound/100, bound + bound/10, bound + bound/2, latency - bound/10}
	primer := authz.NewID('r', 1)
	readers := make([]authz.ID, len(offsets))
	for i := range readers {
		readers[i] = authz.NewID('r', uint64(i+2))
	}
	for _, r := range append(readers, primer) {
		if err := w.Track(pods.Key{Family: pods.OC, Community: k, Subject: r, Channel: ch}, pods.NonMember); err != nil {
			return err
		}
	}
	taken := s.NewEvent("slow-read-snapshot")
	slow := true
	restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
		switch {
		case st.Write:
			return simdb.Fault{Fixed: true}, true // commits at the instant it is issued
		case st.Name == pods.StmtListedOpenChannels && slow:
			slow = false
			return simdb.Fault{Fixed: true, Latency: latency, AfterSnapshot: taken.Set}, true
		case st.Name == pods.StmtMemberChannels:
			return simdb.Fault{Fixed: true}, true // a reader's member half decides nothing here
		}
		return simdb.Fault{}, false
	})
	if err != nil {
		return err
	}
	defer restore()
	wg := s.NewWaitGroup("slow-read")
	wg.Add(1 + len(offsets))
	var errs []error
	s.Go("slow-read-prime", func() {
		defer wg.Done()
		if _, err := w.Accessible(ctx, reader, 1, k, primer); err != nil && !errors.Is(err, pods.ErrSkipped) {
			errs = append(errs, fmt.Errorf("prime: %w", err))
		}
	})
	if err := taken.Wait(ctx); err != nil {
		return err
	}
	snapshot := s.Elapsed()
	if err := w.Write(ctx, writer, -1, kind, k, authz.ID{}, ch); err != nil && !errors.Is(err, pods.ErrSkipped) {
		return fmt.Errorf("the %s revocation: %w", kind, err)
	}
	for i, off := range offsets {
		s.Go(fmt.Sprintf("slow-read-reader%d", i), func() {
			defer wg.Done()
			_ = s.Sleep(ctx, snapshot+off-s.Elapsed())
			if off >= bound && s.Elapsed() < snapshot+latency {
				s.Probe(probeLateJoin)
			}
			if _, err := w.Granted(ctx, reader, 2+i, k, readers[i], ch); err != nil && !errors.Is(err, pods.ErrSkipped) {
				errs = append(errs, fmt.Errorf("reader at +%v: %w", off, err))
			}
		})
	}
	if err := wg.Wait(ctx); err != nil {
		return err
	}
	return errors.Join(errs...)
}

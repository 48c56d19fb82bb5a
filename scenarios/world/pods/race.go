package pods

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// Race is the directed workload that drives a cache's staleness window to
// its bound on purpose, instead of hoping a random churn gets close. A cold
// read of the cache takes its database snapshot at t0. The change that
// makes the snapshot's answer false commits at the same instant, right
// after the snapshot. That is the worst moment: the cache's age clock
// started no earlier than t0, and the answer was true until t0. The read
// then takes ReadLatency to return. Probe readers ask at the offsets from
// t0 that the claim's bound makes interesting: just inside the window,
// exactly at its end, and past it.
//
// A correct cache answers stale inside the window, up to a staleness just
// below the bound, and never at or after it. A design 1% wider, or one that
// serves an answer at exactly the bound, or one that starts its age clock
// later than the read, answers stale at a probe past the bound. The
// staleness checker sees it.
type Race struct {
	// Statement is the cache's read that the change must follow:
	// StmtListedOpenChannels (open half), StmtMemberChannels (member
	// half) or StmtActiveMemberships (membership snapshot).
	Statement string
	// ReadLatency is how long that statement takes after its snapshot.
	ReadLatency time.Duration
	// Change, through WritePod, makes the prime's answer false (or true).
	Change                   Change
	Community, User, Channel authz.ID
	WritePod                 *Pod
	// Prime starts the cold read (on the reading pod). It runs on a task
	// of its own; the race waits for its snapshot.
	Prime func(ctx context.Context) error
	// Offsets are the probes' instants after t0, ascending; Probe(i) asks
	// at the i-th.
	Offsets []time.Duration
	Probe   func(ctx context.Context, i int) error
	// Instant lists statements that take no time while the probes run (a
	// new reader's member-half read before its open-set lookup), so that a
	// probe's answer is decided at the instant it is invoked.
	Instant []string
	// WhileReading runs the probes while the prime's read still runs, each
	// on a task of its own (a probe that waits for that read holds up no
	// other), instead of one after another once the prime has returned.
	// It is for a ReadLatency longer than the window: a reader who asks
	// while an older read runs must not be given that read's answer.
	WhileReading bool
}

// RaceResult is what a race established.
type RaceResult struct {
	Snapshot time.Duration // t0: the read's snapshot and the change's commit instant
	Commit   time.Duration
	// Probed are the instants the probes were invoked at (a probe can be
	// late when the one before it re-read the database).
	Probed []time.Duration
}

// Race runs one race. Writes take no time while it runs (so the change
// commits at the snapshot instant), and the first Statement after the prime
// starts takes ReadLatency; other statements keep the configured model.
func (w *World) Race(ctx context.Context, r Race) (RaceResult, error) {
	var res RaceResult
	if r.Prime == nil || r.Probe == nil || r.WritePod == nil || len(r.Offsets) == 0 {
		return res, fmt.Errorf("pods: a race needs a prime, probes, offsets and a writing pod")
	}
	if w.hook != nil {
		return res, fmt.Errorf("pods: races do not nest")
	}
	s := w.S
	snapshot := time.Duration(-1)
	taken := s.NewEvent("race-snapshot")
	w.hook = func(st simdb.Statement) (simdb.Fault, bool) {
		switch {
		case st.Write:
			return simdb.Fault{Fixed: true}, true // commits at the instant it is issued
		case snapshot < 0 && st.Name == r.Statement:
			snapshot = st.At.Sub(sim.Epoch)
			return simdb.Fault{Fixed: true, Latency: r.ReadLatency, AfterSnapshot: taken.Set}, true
		}
		return simdb.Fault{}, false
	}
	defer func() { w.hook = nil }()
	primed := s.NewEvent("race-primed")
	var primeErr error
	s.Go("race-prime", func() {
		defer primed.Set()
		primeErr = r.Prime(ctx)
	})
	// Wake at the snapshot's instant, once the snapshot is taken; a prime
	// that ends without reaching the statement also wakes the race.
	wake := s.NewEvent("race-wake")
	s.Go("race-watch-snapshot", func() { _ = taken.Wait(ctx); wake.Set() })
	s.Go("race-watch-prime", func() { _ = primed.Wait(ctx); wake.Set() })
	if err := wake.Wait(ctx); err != nil {
		return res, err
	}
	if snapshot < 0 || !taken.IsSet() {
		return res, fmt.Errorf("pods: the race's prime ended without running %s (prime error %v)", r.Statement, primeErr)
	}
	res.Snapshot = snapshot
	if err := w.Write(ctx, r.WritePod, -1, r.Change, r.Community, r.User, r.Channel); err != nil {
		return res, fmt.Errorf("pods: the race's change: %w", err)
	}
	res.Commit = s.Elapsed()
	// The probes' own reads take the configured latency, but for the
	// statements that must not delay the probe's decision.
	instant := func(st simdb.Statement) (simdb.Fault, bool) {
		if !st.Write && slices.Contains(r.Instant, st.Name) {
			return simdb.Fault{Fixed: true}, true
		}
		return simdb.Fault{}, false
	}
	if r.WhileReading {
		race := w.hook // writes still commit at once while the prime reads
		w.hook = func(st simdb.Statement) (simdb.Fault, bool) {
			if f, ok := instant(st); ok {
				return f, true
			}
			return race(st)
		}
		err := probeWhileReading(ctx, s, r, snapshot, &res)
		if werr := primed.Wait(ctx); err == nil {
			err = werr
		}
		if err == nil && primeErr != nil {
			err = fmt.Errorf("pods: the race's prime: %w", primeErr)
		}
		return res, err
	}
	if err := primed.Wait(ctx); err != nil {
		return res, err
	}
	if primeErr != nil {
		return res, fmt.Errorf("pods: the race's prime: %w", primeErr)
	}
	w.hook = instant
	for i, off := range r.Offsets {
		if d := snapshot + off - s.Elapsed(); d > 0 {
			if err := s.Sleep(ctx, d); err != nil {
				return res, err
			}
		}
		res.Probed = append(res.Probed, s.Elapsed())
		// A probe the run's choices dropped (a shrinker removing the
		// probes the failure does not need) asks nothing: the race goes on.
		if err := r.Probe(ctx, i); err != nil && !errors.Is(err, ErrSkipped) {
			return res, fmt.Errorf("pods: race probe %d at +%v: %w", i, off, err)
		}
	}
	return res, nil
}

// probeWhileReading starts every probe of r on a task of its own at its
// offset from snapshot and waits for them all. res.Probed is in the order
// of r.Offsets.
func probeWhileReading(ctx context.Context, s *sim.Sim, r Race, snapshot time.Duration, res *RaceResult) error {
	res.Probed = make([]time.Duration, len(r.Offsets))
	errs := make([]error, len(r.Offsets))
	wg := s.NewWaitGroup("race-probes")
	wg.Add(len(r.Offsets))
	for i, off := range r.Offsets {
		s.Go(fmt.Sprintf("race-probe%d", i), func() {
			defer wg.Done()
			if d := snapshot + off - s.Elapsed(); d > 0 {
				if errs[i] = s.Sleep(ctx, d); errs[i] != nil {
					return
				}
			}
			res.Probed[i] = s.Elapsed()
			if err := r.Probe(ctx, i); err != nil && !errors.Is(err, ErrSkipped) {
				errs[i] = fmt.Errorf("pods: race probe %d at +%v: %w", i, off, err)
			}
		})
	}
	if err := wg.Wait(ctx); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// Override makes h decide the faults of the statements it claims (ok)
// until the returned function restores the configured model. Overrides do
// not nest, nor run during a Race.
func (w *World) Override(h func(simdb.Statement) (simdb.Fault, bool)) (restore func(), err error) {
	if w.hook != nil {
		return nil, fmt.Errorf("pods: an override or a race is already in place")
	}
	w.hook = h
	return func() { w.hook = nil }, nil
}

// WindowOffsets are probe instants around a window that ends bound after
// t0 (plus extra, the part of the window the design adds on its own, such
// as the read that filled a member entry). They are a fine approach from
// inside, the last nanosecond inside, the end itself, and points past it up
// to a fifth of the bound, so a design 1% wider is seen.
func WindowOffsets(bound, extra time.Duration) []time.Duration {
	end := bound + extra
	out := []time.Duration{end / 2, end - bound/100, end - bound/1000, end - time.Nanosecond, end, end + time.Nanosecond,
		end + bound/1000, end + bound/200, end + bound/100, end + bound/50, end + bound/10, end + bound/5}
	return out
}

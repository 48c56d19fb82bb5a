package dr

// The check runs on real goroutines (rt.Real), outside every simulated
// task: its counters are atomics.
//
//windtunnel:allow sync/atomic TestDR7_RealGoroutinesRaceFree runs on real goroutines (rt.Real), outside every simulated task

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims/racefree"
)

// TestDR7_RealGoroutinesRaceFree runs the collector's operations on real
// goroutines (rt.Real): recorders, a drainer, a pruner, a reader of Query
// and an inspector of Snapshot, Len and CheckInvariants, all at once. It
// checks that every point is drained, pruned or still buffered, none twice.
// Under the race detector (make race, and the audit's Race mutants) it is
// DR-7's check for what the simulator cannot see. The simulator runs one
// task at a time and orders every switch, so a lock left out around code
// with no scheduling point inside (a Query without its read lock) changes
// nothing a simulated check observes, while real goroutines race on the map.
// Without the race detector the same run checks conservation on real
// threads.
//
// The race detector only sees accesses that happen: every goroutine yields
// after each operation, and the recorders start once the reader has, so
// reads fall between records even with one processor (GOMAXPROCS=1, where
// the audit runs Race mutants) or on a loaded machine. Without them the
// recorders could finish before the reader first ran: CI once saw a
// Query-without-the-lock mutant survive that way.
func TestDR7_RealGoroutinesRaceFree(t *testing.T) {
	const recorders, perRecorder, keyCount = 4, 2_000, 4
	r, c, base := realCollector(t)
	ctx := context.Background()
	// The drainer, the pruners, the readers and the inspector run in the
	// background, a round at a time, while the recorders record
	// (racefree.Goroutine.Background); the recorders start once a reader has.
	var drained, pruned, reads, inspections atomic.Int64
	var readerStarted atomic.Bool
	recorder := func(w int) error {
		for !readerStarted.Load() {
			r.Yield()
		}
		for i := range perRecorder {
			key := fmt.Sprint("key-", (w+i)%keyCount)
			ts := base.Add(time.Duration((i*7919+w*104729)%100_000) * time.Millisecond)
			if err := c.Record(key, ts, float64(w*perRecorder+i)); err != nil {
				return fmt.Errorf("record: %w", err)
			}
			r.Yield()
		}
		return nil
	}
	cut := 0
	drainer := func() error {
		cut = (cut + 7) % 100
		got, _, err := c.DrainPoints(ctx, base.Add(time.Duration(cut)*time.Second))
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		for _, b := range got {
			drained.Add(int64(len(b.Points)))
		}
		r.Yield()
		return nil
	}
	// Two pruners, at two cutoffs: two writers of the map at once if
	// Prune's write lock were only a read lock.
	pruner := func(i int) error {
		n, err := c.Prune(base.Add(time.Duration(3+2*i) * time.Second))
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		pruned.Add(n)
		r.Yield()
		return nil
	}
	// The readers ask Query alone: Snapshot, Len and CheckInvariants take
	// the read lock, an edge that would order the records before it, so
	// they run on an inspector of their own.
	reader := func(i int) error {
		readerStarted.Store(true)
		if _, err := c.Query(fmt.Sprint("key-", (int(reads.Add(1))+i)%keyCount), base, base.Add(100*time.Second)); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		r.Yield()
		return nil
	}
	inspector := func() error {
		_ = c.Snapshot()
		r.Yield()
		if n := c.Len(); n < 0 || n > recorders*perRecorder {
			return fmt.Errorf("DR-7: Len says %d points are buffered, of %d recorded", n, recorders*perRecorder)
		}
		r.Yield()
		if err := c.CheckInvariants(); err != nil { // DR-6's structure, on real goroutines
			return err
		}
		inspections.Add(1)
		r.Yield()
		return nil
	}
	background := func(gs []racefree.Goroutine) []racefree.Goroutine {
		for i := range gs {
			gs[i].Background = true
		}
		return gs
	}
	gs := racefree.Workers("recorder", recorders, recorder)
	gs = append(gs, background(racefree.Workers("reader", 2, reader))...)
	gs = append(gs, background(racefree.Workers("pruner", 2, pruner))...)
	gs = append(gs, background([]racefree.Goroutine{{Name: "drainer", Run: drainer}, {Name: "inspector", Run: inspector}})...)
	racefree.Concurrently(t, r, gs...)
	left := c.Len()
	if total := int64(recorders * perRecorder); drained.Load()+pruned.Load()+left != total {
		t.Errorf("DR-7: %d points recorded on real goroutines, %d drained + %d pruned + %d buffered = %d",
			total, drained.Load(), pruned.Load(), left, drained.Load()+pruned.Load()+left)
	}
	t.Logf("DR-7 on real goroutines: %d points recorded, %d drained, %d pruned, %d buffered; %d reads of Query and %d of Snapshot, Len and CheckInvariants beside them",
		recorders*perRecorder, drained.Load(), pruned.Load(), left, reads.Load(), inspections.Load())
}

// TestDR9_RealGoroutinesRaceFree starts and stops flush workers on real
// goroutines, as a service's startup and shutdown may race ("Start and
// Stop may race on real threads", FlushWorker), while a recorder records
// and each worker's cycles, if it runs any before its stop, drain, one in
// three failing. Stop must end the worker whichever came first, and every
// point is drained or still buffered. Under the race detector it is
// DR-9's check for the worker's own lock: nothing else orders Start's
// write of the worker's state and Stop's read of it when Stop comes
// first. Half the rounds make it come first, with a pause that is no
// synchronization (a sleep); in the others Start comes first, and the
// worker's task, reading the context Stop cancels, may order them anyway.
func TestDR9_RealGoroutinesRaceFree(t *testing.T) {
	const rounds, recordsEach, stopLimit = 8, 250, 10 * time.Second
	r, c, base := realCollector(t)
	ctx := context.Background()
	var drained, cycles atomic.Int64
	drain := func(ctx context.Context) error {
		if cycles.Add(1)%3 == 0 {
			return errors.New("an injected drain failure") // DR-9: counted, and the worker goes on
		}
		got, _, err := c.DrainPoints(ctx, base.Add(time.Hour))
		for _, b := range got {
			drained.Add(int64(len(b.Points)))
		}
		return err
	}
	stop := func(w *collector.FlushWorker) error {
		stopCtx, cancel := context.WithTimeout(ctx, stopLimit)
		defer cancel()
		return w.Stop(stopCtx)
	}
	pause := func(yes bool) error {
		if !yes {
			return nil
		}
		return r.Sleep(ctx, time.Millisecond)
	}
	for round := range rounds {
		w, err := collector.NewFlushWorker(r, drain, collector.WorkerConfig{Period: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		stopFirst := round%2 == 0
		recorder := func() error {
			for i := range recordsEach {
				if err := c.Record("key", base.Add(time.Duration(round*recordsEach+i)*time.Millisecond), float64(i)); err != nil {
					return fmt.Errorf("record: %w", err)
				}
				r.Yield()
			}
			return nil
		}
		starter := func() error {
			if err := pause(stopFirst); err != nil {
				return err
			}
			return w.Start()
		}
		stopper := func() error {
			if err := pause(!stopFirst); err != nil {
				return err
			}
			return stop(w)
		}
		racefree.Concurrently(t, r,
			racefree.Goroutine{Name: "recorder", Run: recorder},
			racefree.Goroutine{Name: "starter", Run: starter},
			racefree.Goroutine{Name: "stopper", Run: stopper})
		// Stopped once, stopped for good: a second Stop returns once the
		// worker's task, if Start came after all, has ended.
		if err := stop(w); err != nil {
			t.Errorf("DR-9 on real goroutines: round %d: a second Stop: %v (the worker's task did not end within %v)", round, err, stopLimit)
		}
	}
	left := c.Len()
	if total := int64(rounds * recordsEach); drained.Load()+left != total {
		t.Errorf("DR-9 on real goroutines: %d points recorded, %d drained by the workers + %d buffered = %d", total, drained.Load(), left, drained.Load()+left)
	}
	t.Logf("DR-9 on real goroutines: %d workers started and stopped, half of them stopped first; %d cycles ran (every third failing); %d points drained, %d left buffered", rounds, cycles.Load(), drained.Load(), left)
}

// realCollector is a collector on real goroutines for the RaceFree checks,
// its read holds yielding inside (racefree.Preempting), and the instant its
// points start at.
func realCollector(t *testing.T) (rt.Runtime, *collector.Collector, time.Time) {
	t.Helper()
	r := racefree.Preempting(rt.Real()) // read holds yield inside, so two overlap even on one processor
	c, err := collector.New(r, collector.Config{BucketWidth: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r, c, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
}

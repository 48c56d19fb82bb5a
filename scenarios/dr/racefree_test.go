package dr

// The check runs on real goroutines (rt.Real), outside every simulated
// task: its counters are atomics.
//
//windtunnel:allow sync/atomic TestDR7_RealGoroutinesRaceFree runs on real goroutines (rt.Real), outside every simulated task

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestDR7_RealGoroutinesRaceFree runs the collector's operations on real
// goroutines (rt.Real): recorders, a drainer, a pruner and a reader of
// Query, Snapshot and Len, all at once, and checks that every point is
// drained, pruned or still buffered, none twice. Under the race detector
// (make race-families, and the audit's Race mutants) it is DR-7's check for
// what the simulator cannot see: it runs one task at a time and orders
// every switch, so a lock left out around code with no scheduling point
// inside (a Query without its read lock) changes nothing a simulated check
// observes, while real goroutines race on the map. Without the race
// detector the same run checks conservation on real threads.
//
// The race detector only sees accesses that happen: every goroutine yields
// after each operation, and the recorders start once the reader has, so
// reads fall between records even with one processor (GOMAXPROCS=1, where
// the audit runs Race mutants) or on a loaded machine. Without them the
// recorders could finish before the reader first ran: CI once saw a
// Query-without-the-lock mutant survive that way.
func TestDR7_RealGoroutinesRaceFree(t *testing.T) {
	const recorders, perRecorder, keyCount = 4, 2_000, 4
	r := rt.Real()
	c, err := collector.New(r, collector.Config{BucketWidth: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	var recording atomic.Int64
	recording.Store(recorders)
	var drained, pruned, reads atomic.Int64
	var readerStarted atomic.Bool
	recorder := func(w int) error {
		defer recording.Add(-1)
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
	drainer := func() error {
		for cut := 0; recording.Load() > 0; cut = (cut + 7) % 100 {
			got, _, err := c.DrainPoints(ctx, base.Add(time.Duration(cut)*time.Second))
			if err != nil {
				return fmt.Errorf("drain: %w", err)
			}
			for _, b := range got {
				drained.Add(int64(len(b.Points)))
			}
			r.Yield()
		}
		return nil
	}
	pruner := func() error {
		for recording.Load() > 0 {
			n, err := c.Prune(base.Add(3 * time.Second))
			if err != nil {
				return fmt.Errorf("prune: %w", err)
			}
			pruned.Add(n)
			r.Yield()
		}
		return nil
	}
	reader := func() error {
		readerStarted.Store(true)
		for i := 0; recording.Load() > 0; i++ {
			if _, err := c.Query(fmt.Sprint("key-", i%keyCount), base, base.Add(100*time.Second)); err != nil {
				return fmt.Errorf("query: %w", err)
			}
			if i%8 == 0 { // each takes the read lock: an edge that orders the records before it
				_ = c.Snapshot()
				_ = c.Len()
			}
			reads.Add(1)
			r.Yield()
		}
		return nil
	}
	claims.Concurrently(t, r, append(claims.Workers("recorder", recorders, recorder),
		claims.Goroutine{Name: "drainer", Run: drainer},
		claims.Goroutine{Name: "pruner", Run: pruner},
		claims.Goroutine{Name: "reader", Run: reader})...)
	left := c.Len()
	if total := int64(recorders * perRecorder); drained.Load()+pruned.Load()+left != total {
		t.Errorf("DR-7: %d points recorded on real goroutines, %d drained + %d pruned + %d buffered = %d",
			total, drained.Load(), pruned.Load(), left, drained.Load()+pruned.Load()+left)
	}
	t.Logf("DR-7 on real goroutines: %d points recorded, %d drained, %d pruned, %d buffered; %d reads of Query (and of Snapshot and Len every 8th) beside them",
		recorders*perRecorder, drained.Load(), pruned.Load(), left, reads.Load())
}

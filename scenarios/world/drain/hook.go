package drain

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// HookPlan says what a drain does at each of its yields, which the
// collector makes only between its two swaps: after each key of the split
// and once after the split. Acting at every one of them, the last one
// included, is what makes a check guard the whole split and not only its
// start (the seed's review: a probe at the start let both lock mutants pass).
type HookPlan struct {
	// Records issues, from a new task, one record on an existing key
	// (older than any cutoff: it was not buffered at the swap, so it must
	// stay and land after the kept points) and one on a new key.
	Records bool
	// Key is the existing key the records use; "" rotates over the world's
	// keys.
	Key string
	// Wait makes the drain wait, at most HookTimeout of virtual time, for
	// those records (and the query) to complete; a record that cannot
	// complete ends the run naming DR-3. Without Wait the drain goes on at
	// once and the records race the rest of the drain.
	Wait bool
	// Query issues, from a new task, a query of a whole key (one that had
	// points at the swap) and waits for it: DR-7's documented deviation.
	Query bool
	// ProbeDrainMutex probes the drain mutex with TryLock (DR-4).
	ProbeDrainMutex bool
	// Invariants checks the chunk invariants (DR-6) when the write lock is
	// free at the yield.
	Invariants bool
	// Prune issues, from a new task, a prune at a cutoff no newer than
	// PruneHorizon (so never one that concerns the points the drain holds)
	// and, with Wait, waits for it: a prune during the split (DR-4, DR-10).
	Prune bool
}

// hookTS is the timestamp of the records a hook issues: older than every
// point the stamps draw and than every cutoff, by n ms.
func (w *World) hookTS(n int) int64 {
	return w.Stamps.Base - int64(10*time.Second) - int64(n)*int64(time.Millisecond)
}

func (w *World) onYield() {
	s, plan := w.S, w.Hook
	n := len(w.Hooks) + 1
	w.Hooks = append(w.Hooks, HookObs{N: n, Clock: w.tick(), Writes: w.Probe.Writes(), WriteHeld: w.Probe.WriteHeld()})
	obs := func() *HookObs { return &w.Hooks[n-1] } // the slice may grow meanwhile
	if plan.ProbeDrainMutex {
		held := w.Probe.DrainMutexHeld()
		obs().DrainMutexProbed, obs().DrainMutexHeld = true, held
	}
	// Each action of a hook is one operation a shrink may drop: its task
	// asks sim.Keep first, so the answer is keyed by the task's name and not
	// by how many Keep calls the drain's own task made before (that count
	// moves with the keys a drain splits). A yield whose records were
	// dropped says so (Dropped) and counts none injected, so a check tells
	// a shrunk run's missing records from records that never completed.
	var waits []func(context.Context) error
	if plan.Records {
		key, fresh := w.Keys[n%len(w.Keys)], fmt.Sprintf("hook-%d", n)
		if plan.Key != "" {
			key = plan.Key
		}
		task := fmt.Sprintf("hook-recorder-%d", n)
		ev := s.NewEvent(task + ".done")
		// Each hook's records wait for the previous hook's: records that
		// race the drain still never race each other on the shared key, so
		// a linearizability checker has no record order to guess there.
		prev := w.lastHook
		w.lastHook = ev
		s.Go(task, func() {
			defer ev.Set()
			if prev != nil {
				_ = prev.Wait(context.Background())
			}
			if !s.KeepFor(sim.KeepOperation, key) {
				obs().Dropped = true
				return
			}
			obs().Injected = 2
			w.record(task, key, w.hookTS(n), n)
			w.record(task, fresh, w.hookTS(n), n)
		})
		if plan.Wait {
			waits = append(waits, ev.Wait)
		}
	}
	if plan.Query {
		key := w.Keys[(n+1)%len(w.Keys)]
		task := fmt.Sprintf("hook-querier-%d", n)
		ev := s.NewEvent(task + ".done")
		s.Go(task, func() {
			defer ev.Set()
			if !s.KeepFor(sim.KeepOperation, key) {
				return
			}
			w.query(task, key, w.Stamps.Base-int64(time.Hour), w.Stamps.Base+int64(240*time.Hour), n)
		})
		waits = append(waits, ev.Wait)
	}
	if plan.Prune {
		task := fmt.Sprintf("hook-pruner-%d", n)
		ev := s.NewEvent(task + ".done")
		cutoff := w.PruneCutoff()
		s.Go(task, func() {
			defer ev.Set()
			if !s.Keep(sim.KeepOperation) {
				return
			}
			if op := w.Prune(task, cutoff); op.Err != nil {
				s.Failf("world: %s failed: %v", op, op.Err)
			}
		})
		if plan.Wait {
			waits = append(waits, ev.Wait)
		} else {
			w.pending = append(w.pending, ev)
		}
	}
	if len(waits) > 0 {
		start := s.Elapsed()
		ctx, cancel := s.WithTimeout(context.Background(), HookTimeout)
		defer cancel()
		for _, wait := range waits {
			if err := wait(ctx); err != nil {
				s.Failf("DR-3: at drain yield %d (write %d) an operation issued there did not complete within %v of virtual time (%v): the write lock was not free during the split",
					n, obs().Writes, HookTimeout, err)
			}
		}
		if plan.Records && plan.Wait {
			obs().Completed = obs().Injected
		}
		obs().Waited = s.Elapsed() - start
	}
	if plan.Invariants && !w.Probe.WriteHeld() {
		w.CheckInvariants(fmt.Sprintf("at drain yield %d, in the middle of the drain", n))
	}
}

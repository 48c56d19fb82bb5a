package bugbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// CollectorDrain is DR-4's and DR-5's concurrent drains: recorders record
// points of three keys, half of them old (drained by the next drain) and
// half new (kept), while two drainers drain again and again. Once everyone
// is done, every point is in exactly one drained batch or in the buffer
// (DR-4), each recorder's points of one key and age are in its recording
// order there (DR-5: points recorded during a split land after the kept
// ones), and the chunk invariants hold.
var CollectorDrain = &Workload{Name: "collector-drain", Claim: "DR-4, DR-5", Run: collectorDrain, Selected: drSelected}

// drSelected: the collector's data lock and drain mutex.
func drSelected(obj string) bool { return strings.Contains(obj, " collector.") }

func collectorDrain(r rt.Runtime) error {
	const recorders, perRecorder, keys, drainers, drainsEach = 3, 40, 3, 2, 6
	c, err := collector.New(r, collector.Config{BucketWidth: time.Second})
	if err != nil {
		return err
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old, recent, cutoff := base, base.Add(time.Hour), base.Add(time.Minute)
	errs := make([]error, recorders+drainers) // each goroutine's own slot
	drained := make([][]collector.Batch, drainers)
	wg := r.NewWaitGroup("bugbench.drain")
	wg.Add(recorders + drainers)
	for w := range recorders {
		r.Go(fmt.Sprint("recorder-", w), func() {
			defer wg.Done()
			for i := range perRecorder {
				ts := old
				if i%2 == 1 {
					ts = recent
				}
				if err := c.Record(fmt.Sprint("k", i%keys), ts, float64(w*perRecorder+i)); err != nil {
					errs[w] = err
					return
				}
				r.Yield()
			}
		})
	}
	for d := range drainers {
		r.Go(fmt.Sprint("drainer-", d), func() {
			defer wg.Done()
			for range drainsEach {
				got, _, err := c.DrainPoints(context.Background(), cutoff)
				if err != nil {
					errs[recorders+d] = err
					return
				}
				drained[d] = append(drained[d], got...)
				r.Yield()
			}
		})
	}
	if err := wg.Wait(context.Background()); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := c.CheckInvariants(); err != nil {
		return fmt.Errorf("DR-6: %w", err)
	}
	// Every point once; each drainer's batches and then the buffer keep
	// every recorder's points of one key and age in recording order.
	seen := map[float64]int{}
	check := func(where string, bs []collector.Batch) error {
		last := map[string]float64{}
		for _, b := range bs {
			for _, p := range b.Points {
				seen[p.Value]++
				w := int(p.Value) / perRecorder
				k := fmt.Sprint(b.Key, "/", w, "/", p.TS)
				if prev, ok := last[k]; ok && p.Value < prev {
					return fmt.Errorf("DR-5: %s holds recorder %d's point %v of %s after its later point %v", where, w, p.Value, b.Key, prev)
				}
				last[k] = p.Value
			}
		}
		return nil
	}
	for d, bs := range drained {
		if err := check(fmt.Sprint("drainer-", d, "'s batches"), bs); err != nil {
			return err
		}
	}
	if err := check("the buffer", c.Snapshot()); err != nil {
		return err
	}
	for v := range recorders * perRecorder {
		if n := seen[float64(v)]; n != 1 {
			return fmt.Errorf("DR-4: point %d was drained or kept %d times, want once", v, n)
		}
	}
	return nil
}

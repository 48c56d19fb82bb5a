package collector_test

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
)

// at converts a model timestamp (Unix nanoseconds) to the time the
// collector's API takes.
func at(ts int64) time.Time { return time.Unix(0, ts).UTC() }

// toModel flattens drained or buffered batches into model points, in batch
// order: key order, recorded order within a key.
func toModel(bs []collector.Batch) []model.Point {
	var out []model.Point
	for _, b := range bs {
		for _, p := range b.Points {
			out = append(out, model.Point{Key: b.Key, TS: p.TS, Value: p.Value})
		}
	}
	return out
}

func bucketsToModel(bs []collector.Bucket) []model.Bucket {
	var out []model.Bucket
	for _, b := range bs {
		out = append(out, model.Bucket{Key: b.Key, Start: b.Start.UnixNano(), Count: b.Count, Sum: b.Sum, Min: b.Min, Max: b.Max})
	}
	return out
}

// probeRT wraps a runtime so that a test can act at the drain's scheduling
// points: the collector calls Yield only inside the drain, between its two
// swaps (after each key of the split and after the split). It also keeps the
// collector's two locks so that the test can probe them.
type probeRT struct {
	rt.Runtime
	data    rt.RWMutex
	drain   rt.Mutex
	onYield func()
}

func (p *probeRT) NewRWMutex(name string) rt.RWMutex {
	l := p.Runtime.NewRWMutex(name)
	if name == "collector.data" {
		p.data = l
	}
	return l
}

func (p *probeRT) NewMutex(name string) rt.Mutex {
	l := p.Runtime.NewMutex(name)
	if name == "collector.drain" {
		p.drain = l
	}
	return l
}

func (p *probeRT) Yield() {
	if f := p.onYield; f != nil {
		f()
	}
	p.Runtime.Yield()
}

// drainMutexHeld reports whether the drain mutex is held, probing it with
// TryLock (and releasing it if the probe took it).
func (p *probeRT) drainMutexHeld() bool {
	if p.drain.TryLock() {
		p.drain.Unlock()
		return false
	}
	return true
}

// recordFromAnotherTask records pts on a new task and waits, at most
// timeout on the runtime's clock, for the records to complete. Called from
// the drain's task in the middle of the split, it returns an error if a
// record had to wait for the split: the write lock was not free (DR-3).
func (p *probeRT) recordFromAnotherTask(c *collector.Collector, timeout time.Duration, pts ...model.Point) error {
	done := p.NewEvent("mid-split-recorder.done")
	errs := make([]error, len(pts))
	p.Go("mid-split-recorder", func() {
		defer done.Set()
		for i, pt := range pts {
			errs[i] = c.Record(pt.Key, at(pt.TS), pt.Value)
		}
	})
	ctx, cancel := p.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := done.Wait(ctx); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

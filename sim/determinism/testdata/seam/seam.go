// Package seam hands work over the seam's channels, selects, Cond and Once:
// everything here is allowed, so the scan reports nothing.
package seam

import (
	"context"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Pipeline sends n values through a buffered and an unbuffered channel,
// with a select on a context, a Cond and a Once.
func Pipeline(r rt.Runtime, ctx context.Context, n int) int {
	in := rt.NewChan[int](r, "in", 2)
	out := rt.NewChan[int](r, "out", 0)
	once := r.NewOnce("setup")
	mu := r.NewMutex("mu")
	cond := r.NewCond("cond", mu)
	r.Go("worker", func() {
		once.Do(func() {})
		for v := range in.All() {
			out.Send(v * 2)
		}
		out.Close()
	})
	r.Go("producer", func() {
		for i := range n {
			if i, _, _ := rt.Select(r, in.SendCase(i), rt.DoneCase(ctx)); i == 1 {
				break
			}
		}
		in.Close()
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	sum := 0
	for {
		v, ok := out.Recv2()
		if !ok {
			return sum
		}
		sum += v
	}
}

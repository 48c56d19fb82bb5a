// Package example is the README's "simulate your own code" example: a
// type written against the runtime seam (impl/rt). So the same code runs
// on real goroutines (rt.Real()) and under the deterministic simulator,
// where its test (counter_test.go) flies it over seeded schedules with a
// checker.
package example

import "github.com/windtunnel/windtunnel/impl/rt"

// Counter counts hits from many tasks.
type Counter struct {
	mu rt.Mutex
	n  int
}

// NewCounter returns a zero counter whose lock comes from r.
func NewCounter(r rt.Runtime) *Counter { return &Counter{mu: r.NewMutex("counter")} }

// Add adds one. The read and the write happen under one hold of the lock;
// releasing it between them (check-then-act) loses updates, which the
// simulator finds within a few seeds.
func (c *Counter) Add() {
	c.mu.Lock()
	v := c.n
	c.n = v + 1
	c.mu.Unlock()
}

// Value returns the count.
func (c *Counter) Value() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

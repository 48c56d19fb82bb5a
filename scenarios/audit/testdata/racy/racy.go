// Package racy is a fixture of the audit runner's tests of Race mutants: a
// counter behind a lock, which the fixture's mutant leaves out.
package racy

import "sync"

// Counter counts under its lock.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc adds one.
func (c *Counter) Inc() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// Value returns the count.
func (c *Counter) Value() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

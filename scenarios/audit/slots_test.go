package audit

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waiters is how many acquire calls of priority prio are queued.
func (s *slots) waiters(prio int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting[prio])
}

// waitQueued waits (at most 10 s) until prio has n waiters.
func waitQueued(t *testing.T, s *slots, prio, n int) {
	t.Helper()
	for range 10_000 {
		if s.waiters(prio) == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("priority %d never had %d waiters (has %d)", prio, n, s.waiters(prio))
}

// TestAFreedSlotGoesToTheClaimsFirst: with one slot held, a mutant queued
// before a claim part still gets the slot after it; two waiters of one
// priority get it in the order they came.
func TestAFreedSlotGoesToTheClaimsFirst(t *testing.T) {
	s := newSlots(1)
	release := s.acquire(priorityClaims)
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(name string, prio, queued int) {
		wg.Go(func() {
			r := s.acquire(prio)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			r()
		})
		waitQueued(t, s, prio, queued)
	}
	start("mutant 1", priorityMutants, 1)
	start("mutant 2", priorityMutants, 2)
	start("claims 1", priorityClaims, 1)
	start("claims 2", priorityClaims, 2)
	release()
	wg.Wait()
	assert.Equal(t, []string{"claims 1", "claims 2", "mutant 1", "mutant 2"}, order)
	assert.Equal(t, 1, s.free, "every slot is back")
}

// TestSlotsBoundTheProcessesAtOnce: 40 holders on 3 slots never exceed 3
// at once, and do reach 3.
func TestSlotsBoundTheProcessesAtOnce(t *testing.T) {
	s := newSlots(3)
	var mu sync.Mutex
	now, most := 0, 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			r := s.acquire(i % priorities)
			mu.Lock()
			now++
			most = max(most, now)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			now--
			mu.Unlock()
			r()
		})
	}
	wg.Wait()
	assert.Equal(t, 3, most)
	assert.Equal(t, 3, s.free)
	assert.Equal(t, 1, newSlots(0).free, "a budget below one is one")
}

func TestASlotReleasedTwicePanics(t *testing.T) {
	s := newSlots(1)
	r := s.acquire(priorityMutants)
	r()
	require.Panics(t, r)
	assert.Equal(t, 1, s.free)
	assert.Panics(t, func() { s.acquire(priorities) })
}

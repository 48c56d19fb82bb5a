// Package wcache is a small deterministic weighted cache: least-recently-used
// eviction under a weight budget, and an expiry instant per entry.
//
// Why not a library: the authorization caches must run unchanged under the
// deterministic simulator, and no Go cache library does. The otter v2 library
// seeds its hashing and admission randomly and starts a goroutine when expiry
// is set. The ristretto library samples randomly for admission and eviction.
// The theine library's clock cannot be injected. This cache draws no random
// numbers, starts no tasks, never reads a clock (the caller passes now), and
// never iterates a map. So the same calls give the same evictions in every
// run.
//
// It is not safe for concurrent use: the caller guards it with its own lock.
// That keeps the locking policy (and its scheduling points) in the caller,
// where the design of each cache can be read in one place.
//
// The budget is best effort in the same sense as the seed's Moka budget: it
// bounds the estimated weight of retained entries, computed by the caller's
// weigher, not the process's memory.
package wcache

import (
	"fmt"
	"time"
)

// Status says why a lookup found no usable entry.
type Status uint8

const (
	// Hit: the entry is present and not expired.
	Hit Status = iota
	// Absent: no entry for the key.
	Absent
	// Expired: the entry's expiry instant has passed; Get removed it.
	Expired
)

func (s Status) String() string {
	switch s {
	case Hit:
		return "hit"
	case Absent:
		return "absent"
	case Expired:
		return "expired"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Cache maps keys to values. The zero value is not usable; use New.
type Cache[K comparable, V any] struct {
	budget int64
	weigh  func(K, V) int64
	index  map[K]*node[K, V]
	// sentinel.next is the most recently used entry, sentinel.prev the least.
	sentinel node[K, V]
	weight   int64
	evicted  int64
}

type node[K comparable, V any] struct {
	key        K
	val        V
	expiresAt  time.Time
	weight     int64
	prev, next *node[K, V]
}

// New returns an empty cache that keeps the total weight of its entries at
// most budget. weigh must return a positive weight for every entry; it is
// called once per Put.
func New[K comparable, V any](budget int64, weigh func(K, V) int64) (*Cache[K, V], error) {
	if budget <= 0 {
		return nil, fmt.Errorf("wcache: budget must be positive, got %d", budget)
	}
	if weigh == nil {
		return nil, fmt.Errorf("wcache: nil weigher")
	}
	c := &Cache[K, V]{budget: budget, weigh: weigh, index: make(map[K]*node[K, V])}
	c.sentinel.next, c.sentinel.prev = &c.sentinel, &c.sentinel
	return c, nil
}

// Get returns the value for k if it is present and now is before its expiry.
// A hit makes the entry the most recently used; an expired entry is removed.
func (c *Cache[K, V]) Get(k K, now time.Time) (V, Status) {
	n, ok := c.index[k]
	if !ok {
		var zero V
		return zero, Absent
	}
	if !now.Before(n.expiresAt) {
		c.unlink(n)
		var zero V
		return zero, Expired
	}
	c.moveToFront(n)
	return n.val, Hit
}

// Peek is Get without touching recency or removing expired entries: it
// reports the stored value and whether it is still fresh at now.
func (c *Cache[K, V]) Peek(k K, now time.Time) (V, Status) {
	n, ok := c.index[k]
	if !ok {
		var zero V
		return zero, Absent
	}
	if !now.Before(n.expiresAt) {
		return n.val, Expired
	}
	return n.val, Hit
}

// Put stores v under k until expiresAt, replacing any previous entry, then
// evicts least-recently-used entries until the total weight fits the budget.
// An entry heavier than the whole budget is not stored (and Put reports
// false), as in Moka: it would otherwise evict everything and then itself.
func (c *Cache[K, V]) Put(k K, v V, expiresAt time.Time) bool {
	w := c.weigh(k, v)
	if w <= 0 {
		panic(fmt.Sprintf("wcache: weigher returned %d; every entry must weigh something", w))
	}
	if old, ok := c.index[k]; ok {
		c.unlink(old)
	}
	if w > c.budget {
		return false
	}
	n := &node[K, V]{key: k, val: v, expiresAt: expiresAt, weight: w}
	c.index[k] = n
	c.weight += w
	c.linkFront(n)
	for c.weight > c.budget {
		lru := c.sentinel.prev
		c.unlink(lru)
		c.evicted++
	}
	return true
}

// Remove deletes k and reports whether it was present.
func (c *Cache[K, V]) Remove(k K) bool {
	n, ok := c.index[k]
	if ok {
		c.unlink(n)
	}
	return ok
}

// RemoveIf deletes every entry for which pred is true and returns how many it
// deleted. Entries are visited from most to least recently used, so the
// order is deterministic. pred must not call the cache.
func (c *Cache[K, V]) RemoveIf(pred func(K, V) bool) int {
	removed := 0
	for n := c.sentinel.next; n != &c.sentinel; {
		next := n.next
		if pred(n.key, n.val) {
			c.unlink(n)
			removed++
		}
		n = next
	}
	return removed
}

// RemoveExpired deletes every entry whose expiry is not after now and returns
// how many it deleted.
func (c *Cache[K, V]) RemoveExpired(now time.Time) int {
	return c.RemoveIf(func(k K, v V) bool { return !now.Before(c.index[k].expiresAt) })
}

// Len is the number of entries, expired or not.
func (c *Cache[K, V]) Len() int { return len(c.index) }

// Weight is the total weight of the entries.
func (c *Cache[K, V]) Weight() int64 { return c.weight }

// Budget is the weight budget given to New.
func (c *Cache[K, V]) Budget() int64 { return c.budget }

// Evictions counts entries removed to fit the budget since New.
func (c *Cache[K, V]) Evictions() int64 { return c.evicted }

func (c *Cache[K, V]) linkFront(n *node[K, V]) {
	n.prev = &c.sentinel
	n.next = c.sentinel.next
	n.next.prev = n
	c.sentinel.next = n
}

func (c *Cache[K, V]) moveToFront(n *node[K, V]) {
	n.prev.next = n.next
	n.next.prev = n.prev
	c.linkFront(n)
}

func (c *Cache[K, V]) unlink(n *node[K, V]) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
	delete(c.index, n.key)
	c.weight -= n.weight
}

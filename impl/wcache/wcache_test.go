package wcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func byLen(_ string, v []byte) int64 { return int64(len(v)) + 1 }

func TestExpiryAndStatus(t *testing.T) {
	c, err := New(100, byLen)
	require.NoError(t, err)
	c.Put("a", []byte("x"), t0.Add(10*time.Second))
	_, st := c.Get("a", t0.Add(10*time.Second-1))
	assert.Equal(t, Hit, st)
	_, st = c.Get("a", t0.Add(10*time.Second))
	assert.Equal(t, Expired, st, "expiry instant itself is expired")
	_, st = c.Get("a", t0)
	assert.Equal(t, Absent, st, "an expired Get removes the entry")
	assert.Equal(t, int64(0), c.Weight())
}

func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	c, _ := New(10, byLen)
	far := t0.Add(time.Hour)
	c.Put("a", []byte("aaa"), far) // 4
	c.Put("b", []byte("bbb"), far) // 4
	_, _ = c.Get("a", t0)          // a is now most recent
	c.Put("c", []byte("cc"), far)  // 3: total 11 > 10, evict b
	_, st := c.Get("b", t0)
	assert.Equal(t, Absent, st)
	_, st = c.Get("a", t0)
	assert.Equal(t, Hit, st)
	assert.Equal(t, int64(7), c.Weight())
	assert.Equal(t, int64(1), c.Evictions())
	assert.False(t, c.Put("huge", make([]byte, 20), far), "heavier than the budget is refused")
	assert.Equal(t, 2, c.Len())
}

func TestBadConfigAndWeigher(t *testing.T) {
	_, err := New[string, []byte](0, byLen)
	assert.Error(t, err)
	_, err = New[string, []byte](1, nil)
	assert.Error(t, err)
	c, _ := New(10, func(string, int) int64 { return 0 })
	assert.Panics(t, func() { c.Put("a", 1, t0) })
}

// The cache never exceeds its budget, its weight is the sum of its entries,
// and it agrees with a naive model on what is present.
func TestAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		budget := rapid.Int64Range(1, 50).Draw(t, "budget")
		c, _ := New(budget, func(_ int, v int64) int64 { return v })
		type ent struct {
			w   int64
			exp time.Time
		}
		model := map[int]ent{}
		var order []int // most recent last
		touch := func(k int) {
			for i, x := range order {
				if x == k {
					order = append(order[:i], order[i+1:]...)
					break
				}
			}
			order = append(order, k)
		}
		drop := func(k int) {
			delete(model, k)
			for i, x := range order {
				if x == k {
					order = append(order[:i], order[i+1:]...)
					break
				}
			}
		}
		now := t0
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			k := rapid.IntRange(0, 6).Draw(t, "key")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				w := rapid.Int64Range(1, 20).Draw(t, "w")
				exp := now.Add(time.Duration(rapid.IntRange(1, 5).Draw(t, "ttl")) * time.Second)
				drop(k)
				if c.Put(k, w, exp) != (w <= budget) {
					t.Fatalf("Put accepted weight %d with budget %d", w, budget)
				}
				if w <= budget {
					model[k] = ent{w, exp}
					touch(k)
					total := int64(0)
					for _, e := range model {
						total += e.w
					}
					for total > budget {
						lru := order[0]
						total -= model[lru].w
						drop(lru)
					}
				}
			case 1:
				_, st := c.Get(k, now)
				e, ok := model[k]
				want := Absent
				if ok && now.Before(e.exp) {
					want = Hit
					touch(k)
				} else if ok {
					want = Expired
					drop(k)
				}
				if st != want {
					t.Fatalf("Get(%d) = %v, model says %v", k, st, want)
				}
			case 2:
				if c.Remove(k) != (model[k] != ent{}) {
					t.Fatalf("Remove(%d) disagrees", k)
				}
				drop(k)
			case 3:
				now = now.Add(time.Second)
			}
			var sum int64
			for _, e := range model {
				sum += e.w
			}
			if c.Weight() != sum || c.Weight() > budget || c.Len() != len(model) {
				t.Fatalf("weight %d (model %d, budget %d), len %d (model %d)", c.Weight(), sum, budget, c.Len(), len(model))
			}
		}
	})
}

func TestRemoveIfVisitsInRecencyOrder(t *testing.T) {
	c, _ := New(100, func(string, int) int64 { return 1 })
	far := t0.Add(time.Hour)
	for i, k := range []string{"a", "b", "c", "d"} {
		c.Put(k, i, far)
	}
	var seen []string
	n := c.RemoveIf(func(k string, v int) bool { seen = append(seen, k); return v%2 == 0 })
	assert.Equal(t, 2, n)
	assert.Equal(t, []string{"d", "c", "b", "a"}, seen)
	assert.Equal(t, 2, c.Len())
	c.Put("e", 9, t0.Add(time.Second))
	assert.Equal(t, 1, c.RemoveExpired(t0.Add(time.Second)))
}

package simbus

import "container/heap"

// item is one pending delivery: a message (by its record's index) due to
// arrive at the subscriber at virtual instant at.
type item struct {
	at    int64  // arrival, virtual ns since sim.Epoch
	order uint64 // insertion order: equal arrivals keep publish order
	rec   int    // index into the subscriber's records
	dup   bool   // the second copy of a duplicated message
}

// queue is a subscriber's pending deliveries, earliest arrival first.
type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].order < q[j].order
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

func (q *queue) push(it item) { heap.Push(q, it) }
func (q *queue) pop() item    { return heap.Pop(q).(item) }

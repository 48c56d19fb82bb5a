package timeline

import (
	"fmt"
	"slices"
)

// maxElements bounds what a page draws, so that a browser opens the page
// of a long run at once.
const maxElements = 20000

// reserve is what the page draws besides the record's shapes and lanes
// (which window counts): the axes' ticks (at most maxTicks each), the
// blamed table (a row and its six cells), the bands with their labels,
// and the page's fixed parts.
const reserve = 2*maxTicks + 7*maxBlamedRows + 2*(maxBands+1) + 200

// cost is how many elements a shape draws: one, and its label's.
func (s *shape) cost() int {
	if s.kind.point() && s.visible() != "" {
		return 2
	}
	return 1
}

// window picks the events a page draws: all of them if they fit in the
// bound, else a stretch around the blamed events and the end of the
// record (where the failure is). It returns the stretch [lo, hi) and the
// shapes drawn, in the record's order.
func window(d *drawing, budget int) (lo, hi int, drawn []int) {
	n := len(d.rec.Events)
	starts := make([][]int, n) // the shapes and arrows that start at each event
	arrowsAt := make([]int, n)
	total := 0
	for i := range d.shapes {
		s := &d.shapes[i]
		starts[s.s0] = append(starts[s.s0], i)
		total += s.cost() + 3 // and, at worst, a lane of its own
	}
	for _, a := range d.arrows {
		arrowsAt[d.shapes[a.from].s0] += 2
		total += 2
	}
	lo, hi = 0, n
	if total > budget {
		lo, hi = pick(d, starts, arrowsAt, budget)
	}
	keep := make([]bool, len(d.shapes))
	for i := range d.shapes {
		s := &d.shapes[i]
		keep[i] = s.s1 >= lo && s.s0 < hi
	}
	// Both ends of a message drawn, so that its arrow has somewhere to
	// start and end (clipped at the window's edge).
	for _, a := range d.arrows {
		if keep[a.from] || keep[a.to] {
			if d.shapes[a.to].s0 >= lo && d.shapes[a.from].s0 < hi {
				keep[a.from], keep[a.to] = true, true
			}
		}
	}
	for i, k := range keep {
		if k {
			drawn = append(drawn, i)
		}
	}
	return lo, hi, drawn
}

// pick grows a window within budget: first over the blamed events (from
// the last one back, if they do not all fit), then toward the end (all the
// way if it fits, else with half of what is left), back with the rest, and
// forward again.
func pick(d *drawing, starts [][]int, arrowsAt []int, budget int) (lo, hi int) {
	n := len(d.rec.Events)
	seen := map[laneKey]bool{}
	used := 0
	cost := func(q int) (int, []laneKey) {
		c := arrowsAt[q]
		var fresh []laneKey
		for _, i := range starts[q] {
			s := &d.shapes[i]
			c += s.cost()
			if !seen[s.lane] && !slices.Contains(fresh, s.lane) {
				fresh = append(fresh, s.lane)
				c += 3
			}
		}
		return c, fresh
	}
	take := func(q, limit int) bool {
		c, fresh := cost(q)
		if used+c > limit {
			return false
		}
		used += c
		for _, k := range fresh {
			seen[k] = true
		}
		return true
	}
	var blamed []int
	for _, e := range d.rec.Events {
		if e.Blame != "" {
			blamed = append(blamed, e.Seq)
		}
	}
	if len(blamed) == 0 {
		lo, hi = n, n
		for lo > 0 && take(lo-1, budget) {
			lo--
		}
		return lo, hi
	}
	first, last := blamed[0], blamed[len(blamed)-1]
	lo, hi = last+1, last+1
	for lo > first && take(lo-1, budget) {
		lo--
	}
	if lo > first {
		return lo, hi
	}
	// The end of the run is where it failed: all of it if it fits, else
	// half of what is left.
	limit := used + (budget-used)/2
	rest := 0
	restLanes := map[laneKey]bool{}
	for q := hi; q < n; q++ {
		c, fresh := cost(q)
		for _, k := range fresh {
			if restLanes[k] {
				c -= 3
			}
			restLanes[k] = true
		}
		rest += c
	}
	if used+rest <= budget {
		limit = budget
	}
	for hi < n && take(hi, limit) {
		hi++
	}
	for lo > 0 && take(lo-1, budget) {
		lo--
	}
	for hi < n && take(hi, budget) {
		hi++
	}
	return lo, hi
}

// leftOut says what the window left out, "" for nothing.
func leftOut(n, lo, hi int) string {
	if lo == 0 && hi == n {
		return ""
	}
	return fmt.Sprintf("The record has %d events, more than one page draws (about %d elements): this page draws events #%d to #%d, around the blamed events and the end of the run, and leaves out %d events before them and %d after.",
		n, maxElements, lo, hi-1, lo, n-hi)
}

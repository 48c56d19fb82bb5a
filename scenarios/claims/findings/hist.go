package findings

import "math"

// Hist is a distribution on a linear axis from 0 to 1.2 × the bound, with
// the bound and the worst observation marked: a window claim's chart.
type Hist struct {
	Upper float64 `json:"upper"` // the axis ends here (1.2 × bound)
	Bound float64 `json:"bound"`
	Worst float64 `json:"worst"`
	Bins  []int64 `json:"bins"` // equal widths over [0, Upper)
	Over  int64   `json:"over"` // observations ≥ Upper
}

// HistBins is the number of bars of a window chart.
const HistBins = 48

// NewHist bins values on [0, 1.2 × bound).
func NewHist(values []float64, bound, worst float64) *Hist {
	h := &Hist{Upper: 1.2 * bound, Bound: bound, Worst: worst, Bins: make([]int64, HistBins)}
	for _, v := range values {
		h.Add(v)
	}
	return h
}

// Add bins one value.
func (h *Hist) Add(v float64) {
	if v >= h.Upper || math.IsNaN(v) {
		h.Over++
		return
	}
	i := max(int(v/h.Upper*float64(len(h.Bins))), 0)
	h.Bins[min(i, len(h.Bins)-1)]++
}

// Merge adds another histogram of the same axis; a different axis keeps h.
func (h *Hist) Merge(o *Hist) {
	if o == nil || o.Upper != h.Upper || len(o.Bins) != len(h.Bins) {
		return
	}
	for i, n := range o.Bins {
		h.Bins[i] += n
	}
	h.Over += o.Over
	h.Worst = max(h.Worst, o.Worst)
}

// Total counts the histogram's observations.
func (h *Hist) Total() int64 {
	n := h.Over
	for _, b := range h.Bins {
		n += b
	}
	return n
}

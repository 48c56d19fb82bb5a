package claims

import "fmt"

// Max keeps the largest value seen over a test's seeds and the witness that
// produced it. Ties keep the first, so the witness is the earliest seed's.
type Max struct {
	Value   float64
	Witness string
	Seeds   int
	set     bool
}

// Observe offers one seed's value and a function that describes its witness
// (called only when the value is a new maximum).
func (m *Max) Observe(v float64, witness func() string) {
	if !m.set || v > m.Value {
		m.Value, m.set = v, true
		if witness != nil {
			m.Witness = witness()
		}
	}
}

// Seen reports whether any value was observed.
func (m *Max) Seen() bool { return m.set }

func (m *Max) String() string {
	if !m.set {
		return "none observed"
	}
	return fmt.Sprint(m.Value)
}

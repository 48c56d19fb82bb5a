package claims

// Sample is what one seed measured for a claim.
type Sample struct {
	// Worst is the seed's figure in the bound's unit: the largest
	// staleness, the most rows, the smallest ratio. Seen is false when the
	// seed observed nothing the figure is about (no read of the class).
	Worst float64
	Seen  bool
	// Limit is the seed's own limit when the bound depends on what the run
	// measured (OC-7: the TTL plus the read that filled the entry); 0
	// means the table's bound. Tightness is Worst / limit.
	Limit float64
	// Of counts the observations behind the figure ("reads").
	Of int64
	// Wrong counts observations that broke the claim.
	Wrong int64
	// Witness describes what produced Worst (or the first wrong
	// observation).
	Witness  string
	Artifact string
	// Values are the observations, for the distribution. Run keeps a
	// seed's first maxValues of them.
	Values []float64 `json:",omitempty"`
	// Tally holds further counts of the seed, added up over the seeds
	// (Outcome.Tally), and Peak further figures of which the largest is
	// kept (Outcome.Peak): what a measured text reports besides Worst.
	// They travel with the sample, so a sharded sweep merges them too;
	// never add them up in a closure of the check.
	Tally map[string]int64   `json:",omitempty"`
	Peak  map[string]float64 `json:",omitempty"`
}

// maxValues bounds Sample.Values: a seed's distribution keeps its first
// maxValues observations, so a long seed cannot hold the merge's memory.
const maxValues = 1 << 16

// Observe offers one observation: it becomes the seed's worst when larger
// (witness is only called then) and joins the distribution.
func (s *Sample) Observe(v float64, witness func() string) {
	s.Of++
	if len(s.Values) < maxValues {
		s.Values = append(s.Values, v)
	}
	if !s.Seen || v > s.Worst {
		s.Worst, s.Seen = v, true
		if witness != nil {
			s.Witness = witness()
		}
	}
}

// ObserveMin is Observe for figures whose worst case is the smallest
// (ratios that must reach a bound).
func (s *Sample) ObserveMin(v float64, witness func() string) {
	s.Of++
	if !s.Seen || v < s.Worst {
		s.Worst, s.Seen = v, true
		if witness != nil {
			s.Witness = witness()
		}
	}
}

// Wrongly counts one observation that broke the claim, keeping the first
// one's description.
func (s *Sample) Wrongly(describe func() string) {
	s.Wrong++
	if s.Wrong == 1 && describe != nil {
		s.Witness = describe()
	}
}

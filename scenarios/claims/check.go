package claims

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

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
	// Values are the observations, for the distribution. A check keeps
	// them bounded (MaxValues per seed).
	Values []float64 `json:",omitempty"`
	// Tally holds further counts of the seed, added up over the seeds
	// (Outcome.Tally), and Peak further figures of which the largest is
	// kept (Outcome.Peak): what a measured text reports besides Worst.
	// They travel with the sample, so a sharded sweep merges them too;
	// never add them up in a closure of the check.
	Tally map[string]int64   `json:",omitempty"`
	Peak  map[string]float64 `json:",omitempty"`
}

// MaxValues bounds Sample.Values: a seed's distribution keeps its first
// MaxValues observations.
const MaxValues = 1 << 16

// Observe offers one observation: it becomes the seed's worst when larger
// (witness is only called then) and joins the distribution.
func (s *Sample) Observe(v float64, witness func() string) {
	s.Of++
	if len(s.Values) < MaxValues {
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

// Probe is a rare event a check's seeds must reach at least Min times in
// all (sim.Sim.Probe counts it where the world or check observes it).
// Min is declared for the check's default seed count: a run with fewer
// seeds (-sim.seeds=2 in make determinism) must reach it at the same rate,
// Min × seeds / default rounded up, and never less than once; a run with
// more seeds must still reach Min.
type Probe struct {
	Name string // as passed to sim.Sim.Probe
	What string // in words
	Min  int64
}

// Outcome is a check's samples merged over every seed.
type Outcome struct {
	Claim string
	Bound *Bound // nil for a claim without a number
	Seeds int
	// Failed counts seeds whose body returned an error or whose run failed;
	// FirstFailure is the first one's failure.
	Failed       int
	FirstFailure string
	// Worst is the worst figure over the seeds (largest, or smallest for
	// an AtLeast bound), from WorstSeed, with its witness.
	Worst     float64
	Seen      bool
	WorstSeed uint64
	Witness   string
	Artifact  string
	// Tightness is the largest Worst / limit over the seeds (tight bounds).
	Tightness float64
	// Of and Wrong add up the seeds' observations.
	Of, Wrong int64
	Hist      *Hist
	Probes    []ProbeCount
	// Problems are the reasons the verdict is violated, in words.
	Problems []string
	// Unexercised are the requirements on how much the seeds exercised the
	// check (a probe's count, a tight bound's tightness, anything observed
	// to compare with the bound) that a run of fewer seeds than they are
	// declared for did not meet, in words: they leave the claim
	// Inconclusive, since more seeds may meet them, where Problems break it.
	Unexercised []string
	// rateSeeds is the seed count those requirements are declared for (the
	// check's default seeds); a run of fewer is short of them. 0 judges
	// every run in full, as the audit does.
	rateSeeds int
	// limited: the seeds compared their figures with limits of their own
	// (Sample.Limit), so the table's bound alone does not judge Worst.
	limited bool
	// Limit is the largest limit a seed compared with (the table's bound,
	// or a seed's own).
	Limit float64
	// Tally and Peak merge the seeds' Sample.Tally (sums) and Sample.Peak
	// (maxima).
	Tally map[string]int64
	Peak  map[string]float64
}

// WorstText is the worst figure in the bound's unit ("none observed").
func (o Outcome) WorstText() string {
	if !o.Seen {
		return "none observed"
	}
	if o.Bound != nil {
		return o.Bound.Format(o.Worst)
	}
	return FormatValue(o.Worst, Count)
}

// SeedsText says how the seeds' own checks went, from what ran: "every
// one of 10 seeds passed its checks" or "2 of 10 seeds failed, first:
// ...". Measured texts use it instead of asserting success in advance.
func (o Outcome) SeedsText() string {
	if o.Failed == 0 {
		return fmt.Sprintf("every one of %d seeds passed its checks", o.Seeds)
	}
	return fmt.Sprintf("%d of %d seeds failed, first: %s", o.Failed, o.Seeds, o.FirstFailure)
}

// Check declares one claim check.
type Check[R any] struct {
	Claim string
	// Bound names the claim's number in Table that Worst is compared with;
	// "" for a claim without one, which holds when no observation is
	// Wrong.
	Bound string
	// Seeds is the default number of seeds (-sim.seeds overrides it).
	Seeds int
	// Config is the base configuration of every run (limits).
	Config sim.Config
	// MaxSeeds caps the seeds whatever -sim.seeds says (a heavy
	// configuration; 0: no cap).
	MaxSeeds int
	// Sequential runs the seeds one at a time (a body that measures wall
	// time); otherwise they run on every core (simtest's -sim.parallel).
	Sequential bool
	// Fly builds the world from the seed, runs the workload, and returns
	// what it recorded; an error names a violation found in this seed. It
	// receives the bound from the table, the only place a check may take
	// it from.
	Fly func(s *sim.Sim, b Bound) (R, error)
	// Sample extracts the seed's figure from its result.
	Sample func(r R) Sample
	// Measured writes the record's "measured" text from the outcome: what
	// was measured, never what was expected.
	Measured func(o Outcome) string
	// Note adds context computed from the outcome (optional).
	Note func(o Outcome) string
	// Probes are the rare interleavings the seeds must reach.
	Probes []Probe
	// Artifact, if set, writes a seed's artifacts (a porcupine
	// visualization) into dir and returns the file to link, or "". It runs
	// after the seeds, for the seed whose sample is the worst.
	Artifact func(dir string, r R) string
	// Explain, if set, picks a seed worth a page: the first seed (in run
	// order) whose result it accepts is re-run with the full record, and
	// its interleaving table and timeline page are linked from the record
	// (a documented deviation's counterexample, shown like a failure's).
	Explain func(r R) bool
	// Sampled marks a check that samples a random workload and is not
	// built to reach the bound: it is not held to the bound's tightness
	// (the claim's directed check is; the audit requires the tightness of
	// every tight bound over all its records).
	Sampled bool
	// Judge, if set, decides the verdict instead of the default rule (a
	// documented deviation that the check must reproduce). It may add to
	// o.Problems.
	Judge func(o *Outcome) string
}

// Run flies the check's seeds, merges their samples, judges the claim and
// reports its record. The test fails when the verdict is Violated, or not
// what Judge expects. A run of fewer seeds than the check's default that
// breaks nothing but did not exercise the check as much as its default
// seeds must (Outcome.Unexercised) is Inconclusive: logged, and the test
// passes on its seeds alone. A run whose records go to the audit (File) is
// judged in full at any seed count: the audit must never pass a check on
// rates its seeds did not reach.
func Run[R any](t *testing.T, c Check[R]) Outcome {
	t.Helper()
	o := Outcome{Claim: c.Claim}
	if err := knownClaim(c.Claim); err != nil {
		t.Fatalf("claims.Run: %v", err)
		return o
	}
	var b Bound
	if c.Bound != "" {
		b = Get(c.Claim, c.Bound)
		o.Bound = &b
		if b.Unit == Seconds && b.Kind == AtMost {
			// A failing seed's timeline draws the bound as the read's window.
			simtest.TimelineWindow(t, b.Claim+" "+b.Name+" "+b.String(), b.Duration())
		}
	}
	var seeds []SeedSample
	var values map[uint64]R
	var explain func(seed uint64, dir string) (simtest.Explanation, error)
	var explainSeed uint64
	explainOK := false
	if dirs := mergeDirs(); dirs != nil {
		// Merging a sharded sweep: the seeds were flown by the shards;
		// their samples are read back and judged here as one run.
		var err error
		if seeds, err = readShards(t.Name(), dirs); err != nil {
			t.Fatalf("%s: merging shards: %v", c.Claim, err)
			return o
		}
	} else {
		res := simtest.Seeds(t, simtest.Options{Seeds: c.Seeds, MaxSeeds: c.MaxSeeds, Config: c.Config, Sequential: c.Sequential}, func(s *sim.Sim) (R, error) {
			return c.Fly(s, b)
		})
		values = map[uint64]R{}
		explain = res.Explain
		for _, run := range res.Runs {
			if c.Explain != nil && !explainOK && run.Passed() && c.Explain(run.Value) {
				explainSeed, explainOK = run.Seed, true
			}
			seeds = append(seeds, SeedSample{Seed: run.Seed, Index: run.Index, Failure: run.Failure, Probes: run.Probes, Sample: c.Sample(run.Value)})
			values[run.Seed] = run.Value
		}
		if err := writeShard(t.Name(), c.Seeds, c.MaxSeeds, seeds); err != nil {
			t.Errorf("%s: writing the shard's samples: %v", c.Claim, err)
		}
	}
	worst := merge(&o, c.Claim, c.Probes, c.Seeds, seeds)
	if v, ok := values[worst]; c.Artifact != nil && ok {
		dir := filepath.Join(simtest.ArtifactDir(t), fmt.Sprintf("seed=%#x", worst))
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if path := c.Artifact(dir, v); path != "" {
				o.Artifact = path
			}
		}
	}
	var timeline, table string
	if explainOK {
		dir := filepath.Join(simtest.ArtifactDir(t), fmt.Sprintf("explained-seed=%#x", explainSeed))
		ex, err := explain(explainSeed, dir)
		if err != nil {
			t.Errorf("%s: explaining seed %#x: %v", c.Claim, explainSeed, err)
		}
		timeline, table = ex.Timeline, ex.Table
		if ex.Table != "" {
			t.Logf("%s: seed %#x explained: %s %s", c.Claim, explainSeed, ex.Table, ex.Timeline)
		}
	}
	screen := Screening()
	if File() != "" {
		o.rateSeeds = 0
	}
	verdict := judge(&o, !c.Sampled, screen)
	if c.Judge != nil {
		verdict = unexercised(c.Judge(&o), &o)
	}
	for _, u := range o.Unexercised {
		t.Logf("%s: inconclusive, not violated: %s", c.Claim, u)
	}
	for _, p := range o.Problems {
		switch {
		case verdict != Violated:
		case screen && c.Judge != nil:
			// A documented deviation's verdict is over the seeds (it must
			// reproduce in enough of them): one seed cannot decide it.
			t.Logf("%s: %s (not judged while screening)", c.Claim, p)
		default:
			t.Errorf("%s: %s", c.Claim, p)
		}
	}
	rec := Record{ID: c.Claim, Verdict: verdict, Measured: c.Measured(o), Value: o.Worst, Seeds: o.Seeds,
		Witness: o.Witness, Artifact: o.Artifact, Hist: o.Hist, Probes: o.Probes, Timeline: timeline, Table: table}
	if c.Note != nil {
		rec.Note = c.Note(o)
	}
	if o.Bound != nil {
		rec.Bound, rec.BoundName, rec.BoundValue, rec.Unit, rec.Tight = b.String(), b.Name, b.Value, string(b.Unit), b.Tight
		rec.BoundKind = b.Kind.String()
		if o.limited {
			rec.Bound = fmt.Sprintf("%s + what each run adds (measured: up to %s)", b, b.Format(o.Limit-b.Value))
		}
		if b.Tight {
			tt := o.Tightness
			rec.Tightness, rec.Sampled = &tt, c.Sampled
		}
	} else {
		rec.Bound, rec.Value = "0 wrong", float64(o.Wrong)
	}
	if len(o.Problems) > 0 && verdict == Violated {
		rec.Note = strings.TrimPrefix(rec.Note+"; "+strings.Join(o.Problems, "; "), "; ")
	}
	if verdict == Inconclusive {
		rec.Note = strings.TrimPrefix(rec.Note+"; inconclusive: "+strings.Join(o.Unexercised, "; "), "; ")
	}
	Report(t, rec)
	return o
}

// SeedSample is one seed's outcome as a check merges it: what the
// harness reported and what the check's Sample made of the body's value.
// Shards of a sweep write these (shard.go).
type SeedSample struct {
	Seed    uint64           `json:"seed"`
	Index   int              `json:"index"` // the regular seed's index, -1 for a corpus seed
	Failure string           `json:"failure,omitempty"`
	Probes  map[string]int64 `json:"probes,omitempty"`
	Sample  Sample           `json:"sample"`
}

// merge folds the seeds into o and returns the worst seed.
func merge(o *Outcome, claim string, required []Probe, defaultSeeds int, seeds []SeedSample) uint64 {
	var worstSeed uint64
	o.Seeds = len(seeds)
	o.rateSeeds = defaultSeeds
	var values []float64
	var limit float64
	probes := map[string]*ProbeCount{}
	for _, p := range required {
		probes[p.Name] = &ProbeCount{Name: p.Name, Claim: claim, What: p.What, Min: ProbeMin(p.Min, o.Seeds, defaultSeeds)}
	}
	atLeast := o.Bound != nil && o.Bound.Kind == AtLeast
	for i := range seeds {
		run := &seeds[i]
		if run.Failure != "" {
			o.Failed++
			if o.FirstFailure == "" {
				o.FirstFailure = fmt.Sprintf("seed %#x: %s", run.Seed, firstLine(run.Failure))
			}
		}
		for name, n := range run.Probes { //windtunnel:unordered summing counts
			if p := probes[name]; p != nil && n > 0 {
				p.Seeds++
				p.Count += n
			}
		}
		smp := run.Sample
		for k, v := range smp.Tally { //windtunnel:unordered sums
			if o.Tally == nil {
				o.Tally = map[string]int64{}
			}
			o.Tally[k] += v
		}
		for k, v := range smp.Peak { //windtunnel:unordered maxima
			if o.Peak == nil {
				o.Peak = map[string]float64{}
			}
			if cur, ok := o.Peak[k]; !ok || v > cur {
				o.Peak[k] = v
			}
		}
		o.Of += smp.Of
		o.Wrong += smp.Wrong
		if smp.Wrong > 0 && o.Witness == "" && o.Bound == nil {
			o.Witness = fmt.Sprintf("seed %#x: %s", run.Seed, smp.Witness)
		}
		if len(values) < 4*MaxValues {
			values = append(values, smp.Values...)
		}
		if !smp.Seen {
			continue
		}
		better := !o.Seen || (atLeast && smp.Worst < o.Worst) || (!atLeast && smp.Worst > o.Worst)
		if better {
			o.Worst, o.Seen, o.WorstSeed, worstSeed = smp.Worst, true, run.Seed, run.Seed
			if o.Bound != nil || smp.Wrong == 0 {
				o.Witness = fmt.Sprintf("seed %#x: %s", run.Seed, smp.Witness)
			}
			o.Artifact = smp.Artifact
		}
		if o.Bound != nil {
			lim := smp.Limit
			if lim == 0 {
				lim = o.Bound.Value
			}
			limit = max(limit, lim)
			o.limited = o.limited || smp.Limit != 0
			if tt := o.Bound.Tightness(smp.Worst); smp.Limit != 0 {
				o.Tightness = max(o.Tightness, smp.Worst/smp.Limit)
			} else {
				o.Tightness = max(o.Tightness, tt)
			}
			if smp.Limit != 0 && !(Bound{Kind: o.Bound.Kind, Value: smp.Limit, Strict: o.Bound.Strict}).Holds(smp.Worst) {
				o.Problems = append(o.Problems, fmt.Sprintf("seed %#x: %s exceeds this seed's limit %s: %s",
					run.Seed, o.Bound.Format(smp.Worst), o.Bound.Format(smp.Limit), smp.Witness))
			}
		}
	}
	o.Limit = limit
	for _, p := range required {
		o.Probes = append(o.Probes, *probes[p.Name])
	}
	if o.Bound != nil && o.Bound.Unit == Seconds && o.Bound.Kind == AtMost && len(values) > 0 {
		o.Hist = NewHist(values, max(limit, o.Bound.Value), o.Worst)
	}
	return worstSeed
}

// ProbeMin is the number of times seeds seeds must reach a probe declared
// as min over defaultSeeds seeds: the same rate, rounded up, at least once.
func ProbeMin(min int64, seeds, defaultSeeds int) int64 {
	if min <= 0 {
		return 0
	}
	if defaultSeeds <= 0 || seeds >= defaultSeeds {
		return min
	}
	scaled := (min*int64(seeds) + int64(defaultSeeds) - 1) / int64(defaultSeeds)
	return max(scaled, 1)
}

// judge is the default rule: every seed passed, the worst figure is within
// the bound (or nothing was wrong), tight bounds were reached, and every
// probe was reached often enough. While screening, only the first two
// count: they are what a seed breaks on its own, the others are rates over
// the seeds. A run of fewer seeds than o.rateSeeds that misses one of those
// rates is Inconclusive rather than Violated (o.Unexercised): it found
// nothing broken, and its seeds are too few to say the check exercises too
// little.
func judge(o *Outcome, drives, screen bool) string {
	short := o.Seeds < o.rateSeeds
	exercise := func(requirement string) {
		if short {
			o.Unexercised = append(o.Unexercised, fmt.Sprintf("%s; its requirements are declared for %d seeds (the check's default): -sim.seeds=%d judges it",
				requirement, o.rateSeeds, o.rateSeeds))
			return
		}
		o.Problems = append(o.Problems, requirement)
	}
	if o.Failed > 0 {
		o.Problems = append(o.Problems, fmt.Sprintf("%d of %d seeds failed; first: %s", o.Failed, o.Seeds, o.FirstFailure))
	}
	wrong := func() {
		o.Problems = append(o.Problems, fmt.Sprintf("%d of %d observations wrong: %s", o.Wrong, o.Of, o.Witness))
	}
	switch {
	case o.Bound != nil && !o.Seen && !screen:
		exercise(fmt.Sprintf("no seed of %d observed anything to compare with the bound %s", o.Seeds, o.Bound))
		if o.Wrong > 0 && short {
			wrong() // a wrong observation breaks the claim however little else was observed
		}
	case o.Bound != nil && !o.limited && !o.Bound.Holds(o.Worst):
		o.Problems = append(o.Problems, fmt.Sprintf("worst %s breaks the bound %s (%s): %s", o.Bound.Format(o.Worst), o.Bound, o.Bound.Name, o.Witness))
	case o.Wrong > 0:
		wrong()
	}
	if o.Wrong > o.Of && o.Of > 0 {
		// The check's own bookkeeping is off: every wrong observation must
		// be one of the observations it counted.
		o.Problems = append(o.Problems, fmt.Sprintf("the check counted %d wrong of only %d observations: its tally is broken", o.Wrong, o.Of))
	}
	if drives && !screen && o.Bound != nil && o.Bound.Tight && o.Seen && o.Tightness < MinTightness {
		exercise(fmt.Sprintf("the check reached only %.4f of its bound %s (worst %s) in %d seeds: it cannot tell the bound from one %.0f%% wider",
			o.Tightness, o.Bound, o.Bound.Format(o.Worst), o.Seeds, 100*(1-o.Tightness)))
	}
	for _, p := range o.Probes {
		if p.Count < p.Min && !screen {
			exercise(fmt.Sprintf("probe %s (%s) reached %d times in %d seeds, fewer than %d: the seeds do not exercise it", p.Name, p.What, p.Count, o.Seeds, p.Min))
		}
	}
	if len(o.Problems) > 0 {
		return Violated
	}
	return unexercised(Holds, o)
}

// unexercised turns a verdict that found nothing broken (Holds, or a
// documented deviation a check's own Judge found reproduced) into
// Inconclusive when the run did not meet what its default seeds must
// exercise: a short run cannot vouch for a check its seeds barely ran.
func unexercised(verdict string, o *Outcome) string {
	if verdict != Violated && len(o.Unexercised) > 0 {
		return Inconclusive
	}
	return verdict
}

// knownClaim refuses a claim ID that CLAIMS.md does not have: its record
// would be filed under a claim the audit never reads, and the check would
// seem to serve a claim nobody made.
func knownClaim(id string) error {
	cs, err := Claims()
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.ID == id {
			return nil
		}
		ids = append(ids, c.ID)
	}
	if id == "" {
		return fmt.Errorf("the check names no claim (known: %s)", strings.Join(ids, ", "))
	}
	return fmt.Errorf("claim %s is not in CLAIMS.md (known: %s)", id, strings.Join(ids, ", "))
}

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

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

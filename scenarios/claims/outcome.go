package claims

import (
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/claims/shard"
)

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
	Hist      *findings.Hist
	Probes    []findings.ProbeCount
	// Problems are the reasons the verdict is violated, in words.
	Problems []string
	// Unexercised are the requirements on how much the seeds exercised the
	// check (a probe's count, a tight bound's tightness, anything observed
	// to compare with the bound) that a run of fewer seeds than they are
	// declared for did not meet, in words. They leave the claim
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
	return formatValue(o.Worst, Count)
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

// merge folds the seeds into o and returns the worst seed.
func merge(o *Outcome, claim string, required []Probe, defaultSeeds int, seeds []shard.Seed[Sample]) uint64 {
	var worstSeed uint64
	o.Seeds = len(seeds)
	o.rateSeeds = defaultSeeds
	var values []float64
	var limit float64
	probes := map[string]*findings.ProbeCount{}
	for _, p := range required {
		probes[p.Name] = &findings.ProbeCount{Name: p.Name, Claim: claim, What: p.What, Min: probeMin(p.Min, o.Seeds, defaultSeeds)}
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
		if len(values) < 4*maxValues {
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
			if tt := o.Bound.tightness(smp.Worst); smp.Limit != 0 {
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
		o.Hist = findings.NewHist(values, max(limit, o.Bound.Value), o.Worst)
	}
	return worstSeed
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
	if drives && !screen && o.Bound != nil && o.Bound.Tight && o.Seen && o.Tightness < findings.MinTightness {
		exercise(fmt.Sprintf("the check reached only %.4f of its bound %s (worst %s) in %d seeds: it cannot tell the bound from one %.0f%% wider",
			o.Tightness, o.Bound, o.Bound.Format(o.Worst), o.Seeds, 100*(1-o.Tightness)))
	}
	for _, p := range o.Probes {
		if p.Count < p.Min && !screen {
			exercise(fmt.Sprintf("probe %s (%s) reached %d times in %d seeds, fewer than %d: the seeds do not exercise it", p.Name, p.What, p.Count, o.Seeds, p.Min))
		}
	}
	if len(o.Problems) > 0 {
		return findings.Violated
	}
	return unexercised(findings.Holds, o)
}

// unexercised turns a verdict that found nothing broken (Holds, or a
// documented deviation a check's own Judge found reproduced) into
// Inconclusive when the run did not meet what its default seeds must
// exercise: a short run cannot vouch for a check its seeds barely ran.
func unexercised(verdict string, o *Outcome) string {
	if verdict != findings.Violated && len(o.Unexercised) > 0 {
		return findings.Inconclusive
	}
	return verdict
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

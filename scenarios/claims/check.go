package claims

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/claims/shard"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// Check declares one claim check. A first check sets Claim, Bound,
// Options.Seeds, Fly and Measured (and Probes when its claim is about a
// rare interleaving); the rest are for checks that need them.
type Check[R any] struct {
	Claim string
	// Bound names the claim's number in Table that Worst is compared with;
	// "" for a claim without one, which holds when no observation is
	// Wrong.
	Bound string
	// Options are the harness's: the default number of seeds
	// (-sim.seeds overrides it), the base configuration of every run, a
	// cap on the seeds for a heavy configuration, and Sequential for a
	// body that measures wall time.
	simtest.Options
	// Fly builds the world from the seed, runs the workload, and returns
	// what it recorded; an error names a violation found in this seed. It
	// receives the bound from the table, the only place a check may take
	// it from.
	Fly func(s *sim.Sim, b Bound) (R, error)
	// Measured writes the record's "measured" text from the outcome: what
	// was measured, never what was expected.
	Measured func(o Outcome) string
	// Probes are the rare interleavings the seeds must reach.
	Probes []Probe
	// Sample extracts the seed's figure from its result. A Check[Sample]
	// may leave it nil: Fly's result is then the sample itself.
	Sample func(r R) Sample
	// Note adds context to the record: how the check works, what it
	// compares with (NoteFrom, in More, computes it from the outcome).
	Note string
	// Sampled marks a check that samples a random workload and is not
	// built to reach the bound: it is not held to the bound's tightness
	// (the claim's directed check is; the audit requires the tightness of
	// every tight bound over all its records).
	Sampled bool
	// More holds the hooks few checks need.
	More Hooks[R]
}

// Hooks are a check's rarely used hooks, each optional.
type Hooks[R any] struct {
	// Artifact writes a seed's artifacts (a porcupine visualization) into
	// dir and returns the file to link, or "". It runs after the seeds, for
	// the seed whose sample is the worst.
	Artifact func(dir string, r R) string
	// Explain picks a seed worth a page: the first seed (in run order)
	// whose result it accepts is re-run with the full record, and its
	// interleaving table and timeline page are linked from the record (a
	// documented deviation's counterexample, shown like a failure's).
	Explain func(r R) bool
	// Judge decides the verdict instead of the default rule (a documented
	// deviation that the check must reproduce). It may add to o.Problems.
	Judge func(o *Outcome) string
	// NoteFrom computes the record's note from the outcome; it follows
	// Check.Note when both are set.
	NoteFrom func(o Outcome) string
}

// Run flies the check's seeds, merges their samples, judges the claim and
// reports its record. The test fails when the verdict is Violated, or not
// what Judge expects. A run of fewer seeds than the check's default that
// breaks nothing but did not exercise the check as much as its default
// seeds must (Outcome.Unexercised) is Inconclusive: logged, and the test
// passes on its seeds alone. A run whose records go to the audit
// (findings.File) is judged in full at any seed count: the audit must never
// pass a check on rates its seeds did not reach.
func Run[R any](t *testing.T, c Check[R]) Outcome {
	t.Helper()
	o := Outcome{Claim: c.Claim}
	if err := knownClaim(c.Claim); err != nil {
		t.Fatalf("claims.Run: %v", err)
		return o
	}
	sample, err := sampler(c.Sample)
	if err != nil {
		t.Fatalf("claims.Run: %s: %v", c.Claim, err)
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
	var seeds []shard.Seed[Sample]
	var values map[uint64]R
	var explain func(seed uint64, dir string) (simtest.Explanation, error)
	var explainSeed uint64
	explainOK := false
	if dirs := shard.Merging(); dirs != nil {
		// Merging a sharded sweep: the seeds were flown by the shards;
		// their samples are read back and judged here as one run.
		var err error
		if seeds, err = shard.Read[Sample](t.Name(), dirs); err != nil {
			t.Fatalf("%s: merging shards: %v", c.Claim, err)
			return o
		}
	} else {
		res := simtest.Seeds(t, c.Options, func(s *sim.Sim) (R, error) {
			return c.Fly(s, b)
		})
		values = map[uint64]R{}
		explain = res.Explain
		for _, run := range res.Runs {
			if c.More.Explain != nil && !explainOK && run.Passed() && c.More.Explain(run.Value) {
				explainSeed, explainOK = run.Seed, true
			}
			smp := sample(run.Value)
			smp.Values = smp.Values[:min(len(smp.Values), maxValues)]
			seeds = append(seeds, shard.Seed[Sample]{Seed: run.Seed, Index: run.Index, Failure: run.Failure, Probes: run.Probes, Sample: smp})
			values[run.Seed] = run.Value
		}
		if err := shard.Write(t.Name(), c.Seeds, c.MaxSeeds, seeds); err != nil {
			t.Errorf("%s: writing the shard's samples: %v", c.Claim, err)
		}
	}
	worst := merge(&o, c.Claim, c.Probes, c.Seeds, seeds)
	if v, ok := values[worst]; c.More.Artifact != nil && ok {
		dir := filepath.Join(simtest.ArtifactDir(t), fmt.Sprintf("seed=%#x", worst))
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if path := c.More.Artifact(dir, v); path != "" {
				o.Artifact = path
			}
		}
	}
	var ex simtest.Explanation
	if explainOK {
		dir := filepath.Join(simtest.ArtifactDir(t), fmt.Sprintf("explained-seed=%#x", explainSeed))
		var err error
		if ex, err = explain(explainSeed, dir); err != nil {
			t.Errorf("%s: explaining seed %#x: %v", c.Claim, explainSeed, err)
		}
		if ex.Table != "" {
			t.Logf("%s: seed %#x explained: %s %s", c.Claim, explainSeed, ex.Table, ex.Timeline)
		}
	}
	screen := findings.Screening()
	if findings.File() != "" {
		o.rateSeeds = 0
	}
	verdict := judge(&o, !c.Sampled, screen)
	if c.More.Judge != nil {
		verdict = unexercised(c.More.Judge(&o), &o)
	}
	for _, u := range o.Unexercised {
		t.Logf("%s: inconclusive, not violated: %s", c.Claim, u)
	}
	for _, p := range o.Problems {
		switch {
		case verdict != findings.Violated:
		case screen && c.More.Judge != nil:
			// A documented deviation's verdict is over the seeds (it must
			// reproduce in enough of them): one seed cannot decide it.
			t.Logf("%s: %s (not judged while screening)", c.Claim, p)
		default:
			t.Errorf("%s: %s", c.Claim, p)
		}
	}
	findings.Report(t, record(c, o, verdict, ex))
	return o
}

// sampler is the check's Sample, or the identity for a Check[Sample] that
// has none; any other check without one is refused, since Run would have no
// figure to judge.
func sampler[R any](f func(R) Sample) (func(R) Sample, error) {
	if f != nil {
		return f, nil
	}
	if _, ok := any((*R)(nil)).(*Sample); !ok {
		return nil, fmt.Errorf("Check[%T] has no Sample func: only a Check[claims.Sample] may leave it out", *new(R))
	}
	return func(r R) Sample { return any(r).(Sample) }, nil
}

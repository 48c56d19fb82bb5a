package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// msOpts selects the deployment an MSChurn seed flies in.
type msOpts struct {
	pods int
	// reliable turns every bus fault off (MS-3 runs on one pod with
	// reliable invalidation).
	reliable bool
	// lossyPod, when ≥ 0, is a pod that loses 90–100% of the invalidations
	// sent to it, on top of the seed's swarm faults: the lost-invalidation
	// case MS-2 and MS-10 bound. Use -1 for none.
	lossyPod int
	tweak    func(*relay.MSChurn)
}

// msSlowLoadHook makes about half of the membership loads take 300–900 ms, so
// that loads straddle membership changes (MS-2, MS-3): the snapshot instant
// is then well before the load completes.
func msSlowLoadHook(s *sim.Sim) simdb.Hook {
	return func(st simdb.Statement) simdb.Fault {
		if st.Name == relay.StmtActiveMemberships && s.Rand().IntN(2) == 0 {
			return simdb.Fault{Fixed: true, Latency: 300*time.Millisecond + time.Duration(s.Rand().Int64N(int64(600*time.Millisecond)))}
		}
		return simdb.Fault{}
	}
}

// flyMS builds a world with a swarm-chosen database plan (slow tail,
// transient errors, pool pressure) plus slow membership loads, swarm bus
// faults per pod (or a reliable bus), and runs the MSChurn workload on it.
func flyMS(s *sim.Sim, o msOpts) (*relay.World, error) {
	c := relay.DefaultMSChurn()
	if o.tweak != nil {
		o.tweak(&c)
	}
	pods := max(o.pods, 1)
	dbcfg := simdb.Swarm(s.Rand(), simdb.Config{Latency: simdb.DefaultLatency, PoolSize: 8})
	dbcfg.Hook = msSlowLoadHook(s)
	faults := make([]simbus.Faults, pods)
	for i := range faults {
		if o.reliable {
			faults[i] = simbus.Reliable()
			continue
		}
		faults[i] = simbus.Swarm(s.Rand(), c.Horizon)
		if i == o.lossyPod {
			faults[i].LossProb = 0.9 + 0.1*s.Rand().Float64()
		}
	}
	s.Note("%s", dbcfg.String())
	for i, f := range faults {
		s.Note("bus to pod%d %s", i, f.String())
	}
	s.Note("ms churn: %d pods, %d users x %d channels, %d admins (pause ≤%v, grant %.0f%%), writes on %v, reads on %v, %v",
		pods, len(c.Users), len(c.Channels), c.Admins, c.AdminPause, 100*c.GrantProb, c.WritePods, c.ReadPods, c.Horizon)
	tables, err := c.Tables()
	if err != nil {
		return nil, err
	}
	w, err := relay.NewWorld(s, relay.Config{Pods: pods, DB: dbcfg, PodFaults: faults}, tables)
	if err != nil {
		return nil, err
	}
	if err := c.TrackAll(w); err != nil {
		return nil, err
	}
	if _, err := c.Run(context.Background(), w); err != nil {
		return nil, err
	}
	return w, nil
}

// msStaleness bounds the staleness of membership-cache reads (class
// relay.Membership) for one claim, over a test's seeds: grant-staleness,
// deny-staleness, or both (MS-2 bounds both, MS-10 and MS-7 as stated).
type msStaleness struct {
	id          string
	grant, deny bool
	bound       time.Duration
	seeds       claims.PerSeed[staleSeed]
}

// staleSeed is one seed's figures per class ([0] grants, [1] denials).
type staleSeed struct {
	reads   [2]int
	buckets [2][checks.NumBuckets]int64
	max     [2]float64 // seconds; 1e18 for a phantom answer
	witness [2]string
}

var staleClasses = [2]string{"grant", "deny"}

func (c *msStaleness) on(i int) bool { return (i == 0 && c.grant) || (i == 1 && c.deny) }

// check runs the exact checker on one seed's membership reads and, when
// they hold the bound, the Δ-shift cross-check with porcupine, which must
// then agree (say Ok).
func (c *msStaleness) check(seed uint64, h *relay.History, truth checks.Truth) error {
	reads := h.StalenessReads(relay.Membership)
	rep, err := checks.Staleness(reads, truth)
	if err != nil {
		return err
	}
	var st staleSeed
	var errs []string
	for i, r := range [2]checks.ClassReport{rep.Grant, rep.Deny} {
		if !c.on(i) {
			continue
		}
		name := staleClasses[i]
		st.reads[i] = r.Reads
		for b, n := range r.Buckets {
			st.buckets[i][b] = int64(n)
		}
		if r.Phantoms > 0 {
			st.max[i], st.witness[i] = 1e18, fmt.Sprintf("phantom %s: %s", name, h.Describe(r.PhantomExamples[0].ID))
			errs = append(errs, fmt.Sprintf("%d phantom %s answers (never true), e.g. %s", r.Phantoms, name, h.Describe(r.PhantomExamples[0].ID)))
			continue
		}
		st.max[i], st.witness[i] = r.MaxStaleness.Seconds(), name+": "+describeWitness(h, r.Witness)
		if !r.Holds(c.bound) {
			errs = append(errs, fmt.Sprintf("%s-staleness %v exceeds %v: %s", name, r.MaxStaleness, c.bound, describeWitness(h, r.Witness)))
		}
	}
	c.seeds.Set(seed, st)
	if len(errs) > 0 {
		// The cross-check runs on seeds the exact checker passes only:
		// proving a Δ-shifted history Illegal makes porcupine search every
		// order of reads that are Δ = 10 s wide, which is exponential (a
		// no-expiry mutant seed ran for minutes in 9 GB), while the exact
		// checker's verdict and witness are already in hand.
		return fmt.Errorf("%s: %s", c.id, strings.Join(errs, "; "))
	}
	if !rep.Holds(c.bound) {
		return nil // the other class broke the bound: a claim of its own, and no cross-check (see above)
	}
	if agree, detail := checks.CrossCheck(reads, truth, c.bound); !agree {
		return fmt.Errorf("%s: the exact checker and porcupine disagree at Δ=%v: %s", c.id, c.bound, detail)
	}
	return nil
}

// worst returns the largest staleness over the seeds of the given classes
// (0 grants, 1 denials), in seconds, with its witness.
func (c *msStaleness) worst(classes ...int) claims.Max {
	var m claims.Max
	c.seeds.Each(func(seed uint64, st staleSeed) {
		for _, i := range classes {
			m.Observe(st.max[i], func() string { return fmt.Sprintf("seed %#x: %s", seed, st.witness[i]) })
		}
	})
	return m
}

// report files the claim's record after all seeds, with the distribution
// of each bounded class.
func (c *msStaleness) report(t testing.TB, seeds, failures int, note string) {
	var bs []claims.Bucket
	var parts []string
	var bounded []int
	for i, name := range staleClasses {
		if !c.on(i) {
			continue
		}
		bounded = append(bounded, i)
		var buckets [checks.NumBuckets]int64
		reads := 0
		c.seeds.Each(func(_ uint64, st staleSeed) {
			reads += st.reads[i]
			for b, n := range st.buckets[i] {
				buckets[b] += n
			}
		})
		for b, n := range buckets {
			bs = append(bs, claims.Bucket{Label: name + " " + checks.BucketLabel(b), Count: n})
		}
		parts = append(parts, fmt.Sprintf("max %s-staleness %v over %d reads", name, secs(c.worst(i).Value), reads))
	}
	worst := c.worst(bounded...)
	claims.Report(t, claims.Record{
		ID: c.id, Verdict: claims.Verdict(failures == 0), Measured: strings.Join(parts, "; "),
		Bound: fmt.Sprintf("≤ %v", c.bound), Value: worst.Value, Unit: "s", Seeds: seeds,
		Witness: worst.Witness, Buckets: bs, Note: note,
	})
}

// msCounts is a snapshot of the counters a membership claim compares: the
// database's statements and checkouts and one pod's cache metrics.
type msCounts struct {
	loads, points, checkouts int64
	hits, misses             int64
	oversize, waitTimeout    int64
}

func countMS(w *relay.World, pod *relay.Pod) msCounts {
	m := pod.MS.Metrics().Snapshot()
	return msCounts{
		loads:       w.DB.StatementsOf(relay.StmtActiveMemberships),
		points:      w.DB.StatementsOf(relay.StmtIsActiveMember),
		checkouts:   w.DB.Stats().Checkouts,
		hits:        m[membership.MetricHits],
		misses:      m[membership.MetricMisses],
		oversize:    m[fallbackSeries(membership.ReasonOversize)],
		waitTimeout: m[fallbackSeries(membership.ReasonWaitTimeout)],
	}
}

func (a msCounts) sub(b msCounts) msCounts {
	return msCounts{a.loads - b.loads, a.points - b.points, a.checkouts - b.checkouts,
		a.hits - b.hits, a.misses - b.misses, a.oversize - b.oversize, a.waitTimeout - b.waitTimeout}
}

func (a msCounts) String() string {
	return fmt.Sprintf("%d membership loads, %d point checks, %d checkouts; cache hits %d, misses %d, fallbacks oversize %d, wait_timeout %d",
		a.loads, a.points, a.checkouts, a.hits, a.misses, a.oversize, a.waitTimeout)
}

// fallbackSeries is the Snapshot key of one fallbacks_total series.
func fallbackSeries(reason string) string {
	return fmt.Sprintf("%s{reason=%q}", membership.MetricFallbacks, reason)
}

// msSeedDir is where one seed's artifacts go: the test's artifact directory
// and the seed (the body runs without the subtest's *testing.T).
func msSeedDir(t *testing.T, s *sim.Sim) string {
	return filepath.Join(simtest.ArtifactDir(t), fmt.Sprintf("seed=%#x", s.Seed()))
}

// randomMembers gives each of users users a membership in each of the
// channels 1..nChannels with probability ½.
func randomMembers(r *rand.Rand, users, nChannels int) [][]int {
	members := make([][]int, users)
	for u := range members {
		for c := 1; c <= nChannels; c++ {
			if r.IntN(2) == 0 {
				members[u] = append(members[u], c)
			}
		}
	}
	return members
}

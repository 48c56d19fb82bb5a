package scenarios

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// churnOpts selects the deployment one churn seed flies in.
type churnOpts struct {
	pods int
	// slowOpenReads makes about a third of the open-set reads take
	// 300–900 ms, so that fills straddle revocations (OC-2, OC-4).
	slowOpenReads bool
	// slowMemberReads does the same for member-half and membership reads.
	slowMemberReads bool
	// reliable turns the bus faults off (OC-4, OC-6, MS-3 run on one pod
	// with reliable invalidation).
	reliable bool
	// noRestarts keeps every pod's caches for the whole run.
	noRestarts bool
	// lossy makes sure invalidations are lost (at least 20% per link) on
	// top of the swarm's plan, for claims about what a lost one allows.
	lossy bool
	tweak func(*relay.Churn)
}

type churnRun struct {
	w     *relay.World
	churn relay.Churn
	errs  int
}

// flyChurn builds a world with a swarm-chosen fault plan (recorded in the
// run header) and runs the churn workload on it.
func flyChurn(s *sim.Sim, o churnOpts) (*churnRun, error) {
	c := relay.DefaultChurn()
	if o.noRestarts {
		c.RestartProb = 0
	}
	if o.tweak != nil {
		o.tweak(&c)
	}
	horizon := time.Duration(c.AdminWrites) * c.AdminPause / 2
	dbcfg := simdb.Swarm(s.Rand(), simdb.Config{Latency: simdb.DefaultLatency, PoolSize: 8})
	if o.slowOpenReads || o.slowMemberReads {
		dbcfg.Hook = func(st simdb.Statement) simdb.Fault {
			slow := (o.slowOpenReads && st.Name == relay.StmtListedOpenChannels) ||
				(o.slowMemberReads && (st.Name == relay.StmtMemberChannels || st.Name == relay.StmtActiveMemberships))
			if slow && s.Rand().IntN(3) == 0 {
				return simdb.Fault{Fixed: true, Latency: 300*time.Millisecond + time.Duration(s.Rand().Int64N(int64(600*time.Millisecond)))}
			}
			return simdb.Fault{}
		}
	}
	faults := simbus.Swarm(s.Rand(), horizon)
	if o.reliable {
		faults = simbus.Reliable()
	}
	if o.lossy {
		faults.LossProb = max(faults.LossProb, 0.2)
	}
	pods := o.pods
	if pods == 0 {
		pods = 3
	}
	s.Note("%s", dbcfg.String())
	s.Note("bus %s", faults.String())
	s.Note("churn: %d pods, %d admins x %d writes, %d readers x %d reads, restarts %.0f%%",
		pods, c.Admins, c.AdminWrites, c.Readers, c.Reads, 100*c.RestartProb)
	tables, err := c.Tables()
	if err != nil {
		return nil, err
	}
	w, err := relay.NewWorld(s, relay.Config{Pods: pods, DB: dbcfg, Bus: simbus.Config{Faults: faults}}, tables)
	if err != nil {
		return nil, err
	}
	if err := c.TrackAll(w); err != nil {
		return nil, err
	}
	errs := c.Run(context.Background(), w)
	return &churnRun{w: w, churn: c, errs: errs}, nil
}

// stalenessCheck is a staleness bound over one class of reads, aggregated
// over a test's seeds for its claim record.
type stalenessCheck struct {
	id      string
	classes []relay.Class
	grants  bool // check grant-staleness (else deny-staleness)
	bound   time.Duration
	what    string // "grant-staleness of non-member reads"

	worst claims.Max
	seeds claims.PerSeed[stalenessSeed]
}

type stalenessSeed struct {
	reads     int
	buckets   [checks.NumBuckets]int64
	undecided bool // porcupine ran out of time on the cross-check
}

// crossCheckTimeout bounds porcupine in the Δ-shift cross-check: proving a
// long violating history Illegal can take it exponential time.
const crossCheckTimeout = 20 * time.Second

// check runs the exact checker on one seed's history, and the Δ-shift
// cross-check (porcupine with every read's invoke moved back by the bound),
// which must agree with it on every seed where it reaches a verdict.
func (c *stalenessCheck) check(seed uint64, h *relay.History, truth checks.Truth) error {
	reads := h.StalenessReads(c.classes...)
	rep, err := checks.Staleness(reads, truth)
	if err != nil {
		return err
	}
	cls := rep.Deny
	if c.grants {
		cls = rep.Grant
	}
	st := stalenessSeed{reads: cls.Reads}
	for i, n := range cls.Buckets {
		st.buckets[i] = int64(n)
	}
	defer func() { c.seeds.Set(seed, st) }()
	if cls.Phantoms > 0 {
		c.worst.Observe(1e18, func() string { return fmt.Sprintf("phantom answer: %s", h.Describe(cls.PhantomExamples[0].ID)) })
		return fmt.Errorf("%s: %d phantom answers (never true), e.g. %s", c.id, cls.Phantoms, h.Describe(cls.PhantomExamples[0].ID))
	}
	c.worst.Observe(cls.MaxStaleness.Seconds(), func() string { return describeWitness(h, cls.Witness) })
	cross := checks.CrossCheckWithin(reads, truth, c.bound, crossCheckTimeout)
	st.undecided = cross.Undecided
	if !cross.Agree && !cross.Undecided {
		return fmt.Errorf("%s: the exact checker and porcupine disagree at Δ=%v: %s", c.id, c.bound, cross.Detail)
	}
	if !cls.Holds(c.bound) {
		return fmt.Errorf("%s: %s %v exceeds %v: %s", c.id, c.what, cls.MaxStaleness, c.bound, describeWitness(h, cls.Witness))
	}
	return nil
}

// report files the claim record after all seeds.
func (c *stalenessCheck) report(t testing.TB, seeds, failures int, note string) {
	var total stalenessSeed
	undecided := 0
	for _, v := range c.seeds.Values() {
		total.reads += v.reads
		for i, n := range v.buckets {
			total.buckets[i] += n
		}
		if v.undecided {
			undecided++
		}
	}
	var bs []claims.Bucket
	for i, n := range total.buckets {
		bs = append(bs, claims.Bucket{Label: checks.BucketLabel(i), Count: n})
	}
	measured := fmt.Sprintf("max %s %v over %d reads", c.what, secs(c.worst.Value), total.reads)
	if undecided > 0 {
		note += fmt.Sprintf("; the porcupine cross-check was undecided within %v on %d seed(s)", crossCheckTimeout, undecided)
	}
	claims.Report(t, claims.Record{
		ID: c.id, Verdict: claims.Verdict(failures == 0), Measured: measured,
		Bound: fmt.Sprintf("≤ %v", c.bound), Value: c.worst.Value, Unit: "s", Seeds: seeds,
		Witness: c.worst.Witness, Buckets: bs, Note: note,
	})
}

func secs(v float64) time.Duration {
	return time.Duration(v * float64(time.Second)).Round(time.Microsecond)
}

func describeWitness(h *relay.History, w *checks.Witness) string {
	if w == nil {
		return "no read"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  staleness %v: the answer was last true at +%v", h.Describe(w.Read.ID), w.Staleness, time.Duration(w.L))
	if w.Ended {
		fmt.Fprintf(&b, " (the commit at +%v made it false)", time.Duration(w.EndCommit.At))
	}
	return b.String()
}

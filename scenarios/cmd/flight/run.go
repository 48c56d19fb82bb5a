package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// Options of one flight.
type Options struct {
	Seed     uint64
	Relays   int // at least 2
	Rounds   int // OC-2 race rounds: each cuts one relay's bus and races every revocation kind
	Long     int // 10 s race rounds: OC-7, MS-2 and MS-10 races on one relay with its bus cut
	MS3      bool
	Churn    time.Duration // the seeded churn's length (0: none)
	MaxConns int           // each relay's pool size (0: pgstore's default)
	Mutant   string

	PGURL, RedisAddr, ToxiAddr string
}

func (o Options) validate() error {
	switch {
	case o.Relays < 2 || o.Relays > 8:
		return fmt.Errorf("flight: -relays must be 2 to 8, got %d", o.Relays)
	case o.Rounds < 0 || o.Rounds > 100:
		return fmt.Errorf("flight: -rounds must be 0 to 100, got %d", o.Rounds)
	case o.Rounds == 0 && o.Long == 0 && !o.MS3 && o.Churn == 0:
		return fmt.Errorf("flight: nothing to fly: -rounds 0, -long 0 and no -ms3")
	case o.Churn < 0 || o.Churn > 10*time.Minute:
		return fmt.Errorf("flight: -churn must be 0 to 10m, got %v", o.Churn)
	case o.Long < 0 || o.Long > 20:
		return fmt.Errorf("flight: -long must be 0 to 20, got %d", o.Long)
	case o.PGURL == "" || o.RedisAddr == "" || o.ToxiAddr == "":
		return fmt.Errorf("flight: needs %s, %s and %s (make flight sets them)", "WINDTUNNEL_PG_URL", "WINDTUNNEL_REDIS_ADDR", flight.EnvToxiproxy)
	}
	return nil
}

// Result is what a flight measured.
type Result struct {
	Options   Options
	Verdicts  []verdict
	U         uncertainty
	Reads     int
	Commits   int
	Gaps      []int64
	CommitLog []flightCommit // the writer's view: with Sent and Acked
	Errors    map[string]int
	Faults    map[string]int
	Wall      time.Duration
	Cross     countVerdict // OC-10
	Lin       *linVerdict  // MS-3
	Dist      distributions
	Calm      distributions // before any fault
	ChurnDist distributions // the churn's own, faults included
}

// Run flies one flight and judges it.
func Run(ctx context.Context, o Options, logTo io.Writer) (Result, error) {
	if err := o.validate(); err != nil {
		return Result{}, err
	}
	start := time.Now()
	e, err := setup(ctx, o, logTo)
	if err != nil {
		return Result{}, err
	}
	defer e.close()
	watch := startStepWatch()
	clk, err := e.measureClocks(ctx)
	if err != nil {
		return Result{}, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x666c69676874))
	h := &history{}
	calm, err := e.calibrate(ctx, h)
	if err != nil {
		return Result{}, err
	}
	window := claims.Get("OC-2", "open set max age").Duration()
	for round := range o.Rounds {
		r := rng.IntN(o.Relays)
		w := (r + 1 + rng.IntN(o.Relays-1)) % o.Relays
		slow := round%2 == 1
		if err := e.cutBus(ctx, r); err != nil {
			return Result{}, err
		}
		kinds := slices_shuffled(rng, revocations)
		var wg sync.WaitGroup
		errs := make([]error, len(kinds))
		// Fast races run side by side, each on its own community; slow ones
		// one after another, as each puts its latency on the reader's proxy.
		for i, rv := range kinds {
			if slow {
				errs[i] = retried(func() error { return e.ocRace(ctx, h, rv, r, w, window, slow) })
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = e.ocRace(ctx, h, rv, r, w, window, slow) }()
		}
		wg.Wait()
		if err := e.restoreBus(ctx, r); err != nil {
			return Result{}, err
		}
		for _, err := range errs {
			if err != nil {
				return Result{}, fmt.Errorf("round %d: %w", round, err)
			}
		}
	}
	memberWindow := claims.Get("MS-2", "freshness").Duration()
	for round := range o.Long {
		r := rng.IntN(o.Relays)
		w := (r + 1 + rng.IntN(o.Relays-1)) % o.Relays
		if err := e.cutBus(ctx, r); err != nil {
			return Result{}, err
		}
		// Even rounds race OC-7, MS-2 and MS-10 side by side; odd rounds
		// race MS-2 alone with a slow load.
		type race struct {
			op    string
			grant bool
		}
		races := []race{{flight.OpGranted, false}, {flight.OpMember, false}, {flight.OpMember, true}}
		slow := round%2 == 1
		if slow {
			races = []race{{flight.OpMember, false}}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(races))
		for i, rc := range races {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = retried(func() error { return e.memberRace(ctx, h, rc.op, rc.grant, r, w, memberWindow, slow) })
			}()
		}
		wg.Wait()
		if err := e.restoreBus(ctx, r); err != nil {
			return Result{}, err
		}
		for _, err := range errs {
			if err != nil {
				return Result{}, fmt.Errorf("long round %d: %w", round, err)
			}
		}
	}
	var churnDist distributions
	if o.Churn > 0 {
		before, err := e.relayStats(ctx)
		if err != nil {
			return Result{}, err
		}
		if err := e.churn(ctx, h, rng, o.Churn); err != nil {
			return Result{}, fmt.Errorf("churn: %w", err)
		}
		after, err := e.relayStats(ctx)
		if err != nil {
			return Result{}, err
		}
		churnDist = since(before, after)
	}
	var lin *linVerdict
	if o.MS3 {
		l, err := e.ms3(ctx, rng, clk.U())
		if err != nil {
			return Result{}, err
		}
		lin = &l
	}
	dist, err := e.distributions(ctx)
	if err != nil {
		return Result{}, err
	}
	after, err := e.measureClocks(ctx)
	if err != nil {
		return Result{}, err
	}
	clk.Offset = max(clk.Offset, after.Offset)
	clk.Samples += after.Samples
	clk.Step = watch.step()
	log, err := e.writer.Log(ctx)
	if err != nil {
		return Result{}, err
	}
	classifyChurn(h.reads, log)
	truth, err := buildTruth(log, h.reads)
	if err != nil {
		return Result{}, err
	}
	u := uncertainty{Clock: clk, Commit: commitUncertainty(h.commits), ByAt: commitSlack(h.commits)}
	res := Result{Options: o, U: u, Reads: len(h.reads), Commits: len(log), Gaps: h.gaps, Errors: h.errs, Faults: h.faults, CommitLog: h.commits, Lin: lin, Dist: dist, Calm: calm, ChurnDist: churnDist}
	for _, j := range []struct {
		claim, bound, what string
		grants, both       bool
		class              string
		fill               time.Duration
	}{
		{"OC-2", "open set max age", "grant-staleness of non-member reads (races with the bus cut, churn)", true, false, classNonMember, 0},
		{"OC-7", "member ttl", "grant-staleness of member reads (a removed member's race, churn)", true, false, classMember, dist.fill()},
		{"MS-2", "freshness", "grant- and deny-staleness of membership checks (races, churn)", false, true, classMS, 0},
		{"MS-10", "freshness", "deny-staleness of membership checks (a new member's race, churn)", false, false, classMS, 0},
	} {
		if j.class != classNonMember && o.Long == 0 && o.Churn == 0 {
			continue
		}
		v, err := judgeStaleness(j.claim, j.bound, j.what, j.grants, j.both, h.reads, func(r read) bool { return r.Class == j.class }, truth, u, j.fill)
		if err != nil {
			return res, err
		}
		res.Verdicts = append(res.Verdicts, v)
	}
	res.Cross = countGrants(h.reads, classCross)
	res.Wall = time.Since(start)
	return res, nil
}

type flightCommit = flight.Commit

func slices_shuffled(rng *rand.Rand, in []revocation) []revocation {
	out := append([]revocation(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// cutBus disables relay i's Redis proxy: its subscription's connection is
// reset and every reconnect refused, so what is published meanwhile is
// lost to it.
func (e *env) cutBus(ctx context.Context, i int) error {
	return e.toxi.SetEnabled(ctx, e.relays[i].redisProxy, false)
}

// restoreBus enables relay i's Redis proxy and waits (bounded) until its
// subscriber has resubscribed.
func (e *env) restoreBus(ctx context.Context, i int) error {
	before, err := e.stats(ctx, i)
	if err != nil {
		return err
	}
	if err := e.toxi.SetEnabled(ctx, e.relays[i].redisProxy, true); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, err := e.stats(ctx, i)
		if err != nil {
			return err
		}
		if st.Subscribed == 1 && st.Subscriptions > before.Subscriptions {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("flight: relay %d did not resubscribe within 30s of its bus coming back", i)
}

func (e *env) stats(ctx context.Context, i int) (flight.Stats, error) {
	resp, err := e.relays[i].Call(ctx, flight.Request{Op: flight.OpStats})
	if err != nil {
		return flight.Stats{}, err
	}
	if resp.Stats == nil {
		return flight.Stats{}, fmt.Errorf("relay %d: stats: %s", i, resp.Err)
	}
	return *resp.Stats, nil
}

// holds reports whether every claim the flight judged holds.
func (r Result) holds() bool {
	for _, v := range r.Verdicts {
		if !v.Holds {
			return false
		}
	}
	return r.Cross.Grants == 0 && (r.Lin == nil || r.Lin.Verdict == "Ok")
}

// forMutant narrows o to the phases that judge the mutant's claims: the
// OC-2 rounds for OC-2 and OC-4, the 10 s rounds (at least two, so the
// slow MS-2 round flies) for OC-7, MS-2 and MS-10, and MS-3's phase.
func (o Options) forMutant(id string) (Options, error) {
	m, ok := findMutant(id)
	if !ok {
		return o, fmt.Errorf("flight: no catalogue mutant %q", id)
	}
	n := o
	n.Mutant, n.Rounds, n.Long, n.MS3, n.Churn = id, 0, 0, false, 0
	for _, c := range m.Claims {
		switch c {
		case "OC-2", "OC-4", "OC-10":
			n.Rounds = max(o.Rounds, 2)
		case "OC-7", "MS-2", "MS-10":
			n.Long = max(o.Long, 2)
		case "MS-3":
			n.MS3 = true
		}
	}
	if n.Rounds == 0 && n.Long == 0 && !n.MS3 {
		return o, fmt.Errorf("flight: mutant %s's claims %v are not flown here", id, m.Claims)
	}
	return n, nil
}

// minTight is how close to its bound each race must drive its claim's
// worst staleness (issue 39's goal): a race that stops short could not
// tell the bound from a wider one.
const minTight = 0.9

// untight lists the claims whose races ran but whose worst stayed under
// minTight of the bound: OC-2 when OC-2 rounds flew, OC-7, MS-2 and
// MS-10 when 10 s rounds flew.
func (r Result) untight() []string {
	var out []string
	for _, v := range r.Verdicts {
		raced := r.Options.Rounds > 0
		if v.Claim != "OC-2" {
			raced = r.Options.Long > 0
		}
		if raced && v.Tight < minTight {
			out = append(out, fmt.Sprintf("%s: tightness %.4f < %.1f", v.Claim, v.Tight, minTight))
		}
	}
	return out
}

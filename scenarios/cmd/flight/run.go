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
	MaxConns int // each relay's pool size (0: pgstore's default)
	Mutant   string

	PGURL, RedisAddr, ToxiAddr string
}

func (o Options) validate() error {
	switch {
	case o.Relays < 2 || o.Relays > 8:
		return fmt.Errorf("flight: -relays must be 2 to 8, got %d", o.Relays)
	case o.Rounds < 1 || o.Rounds > 100:
		return fmt.Errorf("flight: -rounds must be 1 to 100, got %d", o.Rounds)
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
	Wall      time.Duration
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
				errs[i] = e.ocRace(ctx, h, rv, r, w, window, slow)
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
	truth, err := buildTruth(log, h.reads)
	if err != nil {
		return Result{}, err
	}
	u := uncertainty{Clock: clk, Commit: commitUncertainty(h.commits)}
	res := Result{Options: o, U: u, Reads: len(h.reads), Commits: len(log), Gaps: h.gaps, Errors: h.errs, CommitLog: h.commits}
	oc2, err := judgeStaleness("OC-2", "open set max age", "grant-staleness of non-member reads racing each revocation, bus cut",
		true, h.reads, func(r read) bool { return r.Class == classNonMember }, truth, u)
	if err != nil {
		return res, err
	}
	res.Verdicts = append(res.Verdicts, oc2)
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

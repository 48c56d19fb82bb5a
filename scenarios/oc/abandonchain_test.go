package oc

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// chainHorizon is how many abandoned reads in a row this check lets a
// waiting lookup sit through. The claims name no retry bound; the check
// only asks that there is one, so it picks a horizon far above any sane
// bound: a lookup still waiting after this many would wait as long as
// other callers keep giving up.
const chainHorizon = 16

// probeJoinedAChain: a lookup with a live context joined one abandoned
// open-set read and, after it, another one also abandoned.
const probeJoinedAChain = "oc/joined-abandoned-reads-in-a-row"

// TestOC1_AbandonedReadsInARowEndTheLookup checks that OC-1's lookup
// returns when every shared read it joins is abandoned by its caller. One
// reader asks and joins another caller's open-set read; that caller gives
// up; by then a new caller has started a read of its own (the old one is
// past the max age, so nobody joins it), which the reader joins, and so on:
// a chain of callers with short deadlines in front of a read slower than
// the max age. The reader's own context never ends. Its lookup must end
// (the tables' union, or an error) while the chain goes on, within
// chainHorizon abandoned reads; a lookup that starts over for as long as
// others give up is stuck for as long as they do.
func TestOC1_AbandonedReadsInARowEndTheLookup(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-1", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			run, err := flyAbandonChain(s)
			smp := claims.Sample{Seen: true, Of: 1, Tally: map[string]int64{"joined": int64(run.joined)}}
			if !run.waiting {
				smp.Tally["ended"]++
			}
			if err != nil {
				return smp, err
			}
			smp.Witness = run.summary()
			if wrong := run.wrong(); wrong != "" {
				smp.Wrong = 1
				return smp, fmt.Errorf("OC-1: %s", wrong)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d lookups, each in front of a chain of up to %d callers who gave up on their shared open-set reads: %d ended while the chain went on, after %d abandoned reads in all; %d seeds failed",
				o.Of, chainHorizon, o.Tally["ended"], o.Tally["joined"], o.Failed)
		},
		Probes: []claims.Probe{
			{Name: probeJoinedAChain, What: "a lookup joined an abandoned open-set read, then another one", Min: 20},
		},
	})
}

// chainRun is one chain: when the waiting reader's lookup ended, what it
// answered, and when the chain's callers gave up.
type chainRun struct {
	leaders   int             // callers in the chain who started a read
	gaveUp    []time.Duration // when each caller's lookup ended with an error
	joined    int             // callers who gave up before the reader's lookup ended
	returned  time.Duration   // the reader's lookup ended
	got, want []authz.ID
	err       error
	waiting   bool // the reader's lookup had not ended when the chain ran out
}

func (r chainRun) summary() string {
	if r.err != nil {
		return fmt.Sprintf("the lookup failed at +%v after %d abandoned reads of the chain's %d: %v", r.returned, r.joined, r.leaders, r.err)
	}
	return fmt.Sprintf("the lookup answered %s at +%v after %d abandoned reads of the chain's %d", shortIDs(r.got), r.returned, r.joined, r.leaders)
}

// wrong accepts any error: the claims name neither the error nor the
// retry bound, only that an answer is the union.
func (r chainRun) wrong() string {
	switch {
	case r.waiting:
		return fmt.Sprintf("a lookup with a live context was still waiting after %d callers in a row gave up on the reads it joined", r.joined)
	case r.err == nil && !slices.Equal(r.got, r.want):
		return fmt.Sprintf("the lookup answered %s, the tables' union is %s", shortIDs(r.got), shortIDs(r.want))
	}
	return ""
}

// flyAbandonChain runs one chain on one pod with reliable invalidation.
// Open-set reads of the chain take a step plus 200 ms, a step being the
// max age plus a drawn 10 to 90 ms; caller i starts i steps in (the read
// before is then too old to join) and gives up between one step and the
// end of its read (the next caller's read has started, its own has not
// ended). The reader asks during the first read. Once it has returned no
// new caller starts. The max age comes from the claims table.
func flyAbandonChain(s *sim.Sim) (chainRun, error) {
	var run chainRun
	ctx := context.Background()
	w, c, err := onePod(s)
	if err != nil {
		return run, err
	}
	pod := w.Pods[0]
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	step := maxAge + 10*time.Millisecond + time.Duration(s.Rand().Int64N(int64(80*time.Millisecond)))
	readLatency := step + 200*time.Millisecond
	restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
		if st.Write || st.Name != pods.StmtListedOpenChannels {
			return simdb.Fault{Fixed: true, Required: true}, true
		}
		return simdb.Fault{Fixed: true, Latency: readLatency, Required: true}, true
	})
	if err != nil {
		return run, err
	}
	defer restore()

	readers := append(slices.Clone(c.NonMembers), c.Members...)
	s.Rand().Shuffle(len(readers), func(i, j int) { readers[i], readers[j] = readers[j], readers[i] })
	reader, callers := readers[0], readers[1:]
	done := false
	wg := s.NewWaitGroup("abandon-chain")
	wg.Add(1)
	s.Go("reader", func() {
		defer wg.Done()
		if err := s.Sleep(ctx, time.Millisecond+time.Duration(s.Rand().Int64N(int64(maxAge/2)))); err != nil {
			return
		}
		got, err := w.Accessible(ctx, pod, 0, c.Community, reader)
		run.returned, done = s.Elapsed(), true
		run.got, run.err = got, err
	})
	start := s.Elapsed()
	for i := 0; i < chainHorizon && !done; i++ {
		if err := s.Sleep(ctx, start+time.Duration(i)*step-s.Elapsed()); err != nil {
			return run, err
		}
		if done {
			break
		}
		run.leaders++
		giveUp := step + time.Millisecond + time.Duration(s.Rand().Int64N(int64(readLatency-step-2*time.Millisecond)))
		wg.Add(1)
		s.Go(fmt.Sprintf("caller%d", i), func() {
			defer wg.Done()
			lctx, cancel := s.WithTimeout(ctx, giveUp)
			defer cancel()
			if _, err := w.Accessible(lctx, pod, 1+i, c.Community, callers[i%len(callers)]); err != nil {
				run.gaveUp = append(run.gaveUp, s.Elapsed())
			}
		})
	}
	// Past the end of the last caller's read: its caller has given up.
	if err := s.Sleep(ctx, readLatency); err != nil {
		return run, err
	}
	run.waiting = !done
	if err := wg.Wait(ctx); err != nil {
		return run, err
	}
	for _, at := range run.gaveUp {
		if run.waiting || at <= run.returned {
			run.joined++
		}
	}
	if run.joined >= 2 {
		s.Probe(probeJoinedAChain)
	}
	run.want = expectedAccessible(w.DB.State(), c.Community, reader)
	return run, nil
}

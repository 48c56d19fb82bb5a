package oc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC8_SlowReadNeverDisplacesAFresherOne checks OC-8's once per window
// where two open-set reads of one community overlap. Reader A's read is
// slower than the open set's max age, so reader B, asking once A's read is
// too old to join, reads again and lands first. When A's read lands, its
// rows are older than B's: the cache must keep B's (OC-4: only a later
// read replaces an entry). Reader C then asks inside B's window: a hit, no
// third read. Kept, A's older rows would already be past the max age, and
// C would read the open set again within the window.
func TestOC8_SlowReadNeverDisplacesAFresherOne(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-8", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			maxAge := claims.Get("OC-2", "open set max age").Duration()
			w, c, err := onePod(s)
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			r := s.Rand()
			slow := maxAge + 100*time.Millisecond + time.Duration(r.Int64N(int64(2*maxAge)))
			fast := time.Millisecond + time.Duration(r.Int64N(int64(50*time.Millisecond)))
			lo := max(maxAge, slow-maxAge) + 5*time.Millisecond // A's read too old to join; B's rows still fresh when A's land
			hi := slow - fast - 5*time.Millisecond              // B's read lands before A's
			tb := lo + time.Duration(r.Int64N(int64(hi-lo)))
			landed := slow + 5*time.Millisecond
			tc := landed + time.Duration(r.Int64N(int64(tb+maxAge-landed-time.Millisecond)))
			if !(maxAge < tb && tb+fast < slow && slow < tc && tc < tb+maxAge) {
				return smp, fmt.Errorf("setup: A's read %v, B asks at %v (read %v), C at %v: not the overlap this check needs", slow, tb, fast, tc)
			}

			var reads []time.Duration // the open-set reads, by their start
			restore, err := w.Override(func(st simdb.Statement) (simdb.Fault, bool) {
				if st.Write || st.Name != pods.StmtListedOpenChannels {
					return simdb.Fault{Fixed: true, Required: true}, true
				}
				reads = append(reads, s.Elapsed())
				lat := time.Millisecond
				switch len(reads) {
				case 1:
					lat = slow
				case 2:
					lat = fast
				}
				return simdb.Fault{Fixed: true, Latency: lat, Required: true}, true
			})
			if err != nil {
				return smp, err
			}
			defer restore()
			readers := c.NonMembers
			if len(readers) < 3 {
				return smp, fmt.Errorf("setup: %d non-members, want 3", len(readers))
			}
			ctx := context.Background()
			got := make([]string, 3)
			var errs []error
			var hitsBeforeC, hitsAfterC int64
			wg := s.NewWaitGroup("readers")
			wg.Add(3)
			for i, at := range []time.Duration{0, tb, tc} {
				s.Go(fmt.Sprintf("reader-%c", 'A'+i), func() {
					defer wg.Done()
					if err := s.Sleep(ctx, at); err != nil {
						errs = append(errs, err)
						return
					}
					if i == 2 && !openHitsInto(pod, &hitsBeforeC, &errs) {
						return
					}
					ids, err := w.Accessible(ctx, pod, i+1, c.Community, readers[i])
					if err != nil {
						errs = append(errs, fmt.Errorf("reader %c: %w", 'A'+i, err))
						return
					}
					if i == 2 && !openHitsInto(pod, &hitsAfterC, &errs) {
						return
					}
					got[i] = shortIDs(ids)
				})
			}
			if err := wg.Wait(ctx); err != nil {
				return smp, err
			}
			if len(errs) > 0 {
				return smp, errs[0]
			}
			state := w.DB.State()
			for i := range got {
				if want := shortIDs(expectedAccessible(state, c.Community, readers[i])); got[i] != want {
					smp.Wrongly(func() string { return fmt.Sprintf("reader %c got %v, want %v", 'A'+i, got[i], want) })
				}
			}
			smp.Observe(float64(len(reads)), func() string {
				return fmt.Sprintf("A's read of %v from +0s, B's of %v from +%v, C asks at +%v: open-set reads at %v", slow, fast, tb, tc, reads)
			})
			switch {
			case len(reads) != 2:
				return smp, fmt.Errorf("OC-8: A's read of %v from +0s, B's of %v from +%v, C at +%v: %d open-set reads (at %v), want 2: C, inside B's window, read again",
					slow, fast, tb, tc, len(reads), reads)
			case hitsAfterC-hitsBeforeC != 1:
				return smp, fmt.Errorf("OC-8: C asked inside B's window at +%v and counted %d open-set hits, want 1", tc, hitsAfterC-hitsBeforeC)
			case smp.Wrong > 0:
				return smp, fmt.Errorf("OC-1: %s", smp.Witness)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s open-set reads for three readers of one community where a read slower than the max age lands after a fresher one", o.WorstText())
		},
	})
}

// openHitsInto scrapes the pod's open-set hits into *hits, or appends the
// scrape's error to *errs and reports false.
func openHitsInto(pod *pods.Pod, hits *int64, errs *[]error) bool {
	m, err := scrapeOC(pod)
	if err != nil {
		*errs = append(*errs, err)
		return false
	}
	*hits = m[seriesOpenHits]
	return true
}

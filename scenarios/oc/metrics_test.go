package oc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// The source text's counters (series.Table), by what they count.
const (
	seriesOpenHits       = `open_channels_cache_hits_total`
	seriesOpenAbsent     = `open_channels_cache_misses_total{reason="absent"}`
	seriesOpenExpired    = `open_channels_cache_misses_total{reason="expired"}`
	seriesMemberHits     = `accessible_channels_cache_hits_total`
	seriesMemberMisses   = `accessible_channels_cache_misses_total`
	metricsFamilyPrefix  = "open_channels_cache"
	memberFamilyPrefixes = "accessible_channels_cache"
)

// TestOC9_MetricsMatchEvents checks OC-9: the counters count what happened,
// under the names and labels the source text gives. The harness keeps its
// own model of both halves (member entries live the member TTL from their
// fill; the open set is served the max age from its read's start and kept
// the TTL), its numbers from the claims table. It runs a seeded sequence
// of lookups, pauses across both boundaries and invalidations, with
// instantaneous database reads so every instant is known. It compares
// every series after every step, scraped through the Prometheus text
// parser (series.Scrape). Every series the source text names must be
// exported: a counter missing, renamed, mislabelled or printed as text no
// scraper parses fails, as does one that counts the wrong events.
func TestOC9_MetricsMatchEvents(t *testing.T) {
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	ttl := claims.Get("OC-7", "member ttl").Duration()
	named := append(series.Of(metricsFamilyPrefix), series.Of(memberFamilyPrefixes)...)
	for _, s := range []string{seriesOpenHits, seriesOpenAbsent, seriesOpenExpired, seriesMemberHits, seriesMemberMisses} {
		if !slices.Contains(named, s) {
			t.Fatalf("OC-9: the harness counts %s, which the claims table does not name (it names %v)", s, named)
		}
	}
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-9", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			ctx := context.Background()
			c := pods.DefaultChurn()
			tables, err := c.Tables()
			if err != nil {
				return smp, err
			}
			w, err := pods.NewWorld(s, pods.Config{Pods: 1}, tables) // zero latency: reads take no time
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			readers := append(append([]authz.ID{}, c.NonMembers...), c.Members...)
			want := map[string]int64{}
			for _, name := range named {
				want[name] = 0
			}
			memberFill := map[authz.ID]time.Duration{} // reader -> fill instant
			openRead, haveOpen := time.Duration(0), false
			for step := range 60 {
				now := s.Elapsed()
				switch op := s.Rand().IntN(10); {
				case op < 6:
					r := readers[s.Rand().IntN(len(readers))]
					if at, ok := memberFill[r]; ok && now < at+ttl {
						want[seriesMemberHits]++
					} else {
						want[seriesMemberMisses]++
						memberFill[r] = now
					}
					switch {
					case haveOpen && now < openRead+maxAge:
						want[seriesOpenHits]++
					case haveOpen && now < openRead+ttl:
						want[seriesOpenExpired]++
						openRead = now
					default:
						want[seriesOpenAbsent]++
						openRead, haveOpen = now, true
					}
					if _, err := pod.OC.Accessible(ctx, c.Community, r); err != nil {
						return smp, err
					}
				case op < 8:
					_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(ttl+2*time.Second))))
				case op == 8:
					r := readers[s.Rand().IntN(len(readers))]
					pod.Relay.Invalidate(relay.MembershipChanged(c.Community, r, c.PrivateChannels[0]))
					delete(memberFill, r)
				default:
					pod.Relay.Invalidate(relay.AccessibleChanged(c.Community))
					clear(memberFill)
					haveOpen = false
				}
				// Read as a Prometheus server reads them: an exposition the
				// parser refuses, or a named series missing or mistyped in
				// it, is wrong however right the registry's own counts are.
				got, err := scrapeOC(pod)
				if err != nil {
					smp.Of++
					smp.Wrongly(func() string { return fmt.Sprintf("after step %d at +%v: %v", step+1, s.Elapsed(), err) })
					return smp, fmt.Errorf("OC-9: %s", smp.Witness)
				}
				for _, name := range named {
					smp.Of++ // one comparison per named series per step
					v, ok := got[name]
					switch {
					case !ok:
						smp.Wrongly(func() string {
							return fmt.Sprintf("the cache exports no series %s (it exports %s)", name, strings.Join(sortedKeys(got), ", "))
						})
					case v != want[name]:
						smp.Wrongly(func() string {
							return fmt.Sprintf("after step %d at +%v: %s = %d, the harness counted %d", step+1, s.Elapsed(), name, v, want[name])
						})
					}
				}
				if smp.Wrong > 0 {
					return smp, fmt.Errorf("OC-9: %s", smp.Witness)
				}
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d comparisons (each of the %d series the source text names, after every step) found the series missing or different from the harness's count", o.Wrong, o.Of, len(named))
		},
	})
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m { //windtunnel:unordered sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// OC-9: the metrics count what happened. The harness keeps its own model of
// both halves (member entries live 10 s from their fill; the open set is
// served 1 s from its read's start and kept 10 s) over a seeded sequence of
// lookups, pauses across both boundaries and invalidations, with
// instantaneous database reads so every instant is known, and compares
// every counter after every step:
// open_channels_cache_hits_total, open_channels_cache_misses_total by
// reason, and the member-half accessible_channels_cache_hits/misses_total.
func TestOC9_MetricsMatchEvents(t *testing.T) {
	var stepsPer claims.PerSeed[int]
	var first string
	sum := simtest.Run(t, simtest.Options{Seeds: 20}, func(s *sim.Sim) error {
		steps := 0
		defer func() { stepsPer.Set(s.Seed(), steps) }()
		ctx := context.Background()
		c := relay.DefaultChurn()
		tables, err := c.Tables()
		if err != nil {
			return err
		}
		w, err := relay.NewWorld(s, relay.Config{Pods: 1}, tables) // zero latency: reads take no time
		if err != nil {
			return err
		}
		cache := w.Pods[0].OC
		readers := append(append([]authz.ID{}, c.NonMembers...), c.Members...)
		want := map[string]int64{}
		memberFill := map[authz.ID]time.Duration{} // reader -> fill instant
		openRead, haveOpen := time.Duration(0), false
		for range 60 {
			now := s.Elapsed()
			switch op := s.Rand().IntN(10); {
			case op < 6:
				r := readers[s.Rand().IntN(len(readers))]
				if at, ok := memberFill[r]; ok && now < at+10*time.Second {
					want[accesschannels.MetricMemberHits]++
				} else {
					want[accesschannels.MetricMemberMisses]++
					memberFill[r] = now
				}
				switch {
				case haveOpen && now < openRead+time.Second:
					want[accesschannels.MetricOpenHits]++
				case haveOpen && now < openRead+10*time.Second:
					want[accesschannels.MetricOpenMisses+`{reason="expired"}`]++
					openRead = now
				default:
					want[accesschannels.MetricOpenMisses+`{reason="absent"}`]++
					openRead, haveOpen = now, true
				}
				if _, err := cache.Accessible(ctx, c.Community, r); err != nil {
					return err
				}
			case op < 8:
				_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(12*time.Second))))
			case op == 8:
				r := readers[s.Rand().IntN(len(readers))]
				cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: c.Community, UserID: r, ChannelID: c.PrivateChannels[0]})
				delete(memberFill, r)
			default:
				cache.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: c.Community})
				clear(memberFill)
				haveOpen = false
			}
			steps++
			got := cache.Metrics().Snapshot()
			for name, v := range got {
				if v != want[name] {
					first = fmt.Sprintf("after step %d at +%v: %s = %d, the harness counted %d", steps, s.Elapsed(), name, v, want[name])
					return fmt.Errorf("OC-9: %s", first)
				}
			}
		}
		return nil
	})
	steps := 0
	for _, n := range stepsPer.Values() {
		steps += n
	}
	claims.Report(t, claims.Record{
		ID: "OC-9", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("every counter equal to the harness's count after each of %d steps", steps),
		Bound:    "equal", Seeds: sum.Seeds, Witness: first,
	})
}

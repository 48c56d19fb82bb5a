package scenarios

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

var revocations = []relay.Change{relay.MakePrivate, relay.Delete, relay.Unlist}

// TestOC3_WindowIsReal is the seed's own test,
// a_lost_open_set_invalidation_grants_a_revoked_channel_only_until_max_age,
// on two pods of one database with no invalidation between them. For each
// revocation (private, deleted, unlisted), in a seeded order and with seeded
// timings: prime the reader pod, revoke and invalidate only the writer pod,
// show that a NEW reader on the reader pod is still granted inside the
// window (OC-3: the window is real; a design that never caches the open set
// fails this control), age past OPEN_CHANNELS_MAX_AGE, and show that a new
// reader and the earlier-cached reader are both denied (OC-2 per kind).
func TestOC3_WindowIsReal(t *testing.T) {
	var observedPer claims.PerSeed[map[relay.Change]bool]
	var oldest claims.Max // the staleness of the stale grants the window allowed
	sum := simtest.Run(t, simtest.Options{Seeds: 30}, func(s *sim.Sim) error {
		observed := map[relay.Change]bool{}
		defer func() { observedPer.Set(s.Seed(), observed) }()
		ctx := context.Background()
		k := authz.NewID('k', 1)
		tables := relay.NewTables()
		channel := map[relay.Change]authz.ID{}
		for i, kind := range revocations {
			channel[kind] = authz.NewID('o', uint64(i+1))
			if err := tables.AddChannel(relay.Channel{ID: channel[kind], Community: k, Open: true, Listed: true}); err != nil {
				return err
			}
		}
		// Pod 0 writes; pod 1 reads and hears nothing from pod 0.
		w, err := relay.NewWorld(s, relay.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency},
			PodFaults: []simbus.Faults{simbus.Reliable(), {LossProb: 1}}}, tables)
		if err != nil {
			return err
		}
		writer, reader := w.Pods[0], w.Pods[1]
		order := slices.Clone(revocations)
		s.Rand().Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		s.Note("revocation order %v", order)
		for n, kind := range order {
			ch := channel[kind]
			primed, fresh, late := authz.NewID('r', uint64(3*n+1)), authz.NewID('r', uint64(3*n+2)), authz.NewID('r', uint64(3*n+3))
			// 1. Prime the reader pod.
			primeAt := s.Elapsed()
			ids, err := w.Accessible(ctx, reader, 1, k, primed)
			if err != nil {
				return err
			}
			if !slices.Contains(ids, ch) {
				return fmt.Errorf("setup: %s not accessible before its revocation", relay.Short(ch))
			}
			// 2. Revoke in the database and invalidate only the writer pod.
			_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(500*time.Millisecond))))
			if err := w.Write(ctx, writer, -1, kind, k, authz.ID{}, ch); err != nil {
				return err
			}
			revokedAt := s.Elapsed()
			if ok, err := w.Granted(ctx, writer, 2, k, fresh, ch); err != nil || ok {
				return fmt.Errorf("the writer pod still grants %s after its own invalidation (err %v)", relay.Short(ch), err)
			}
			// 3. Inside the window, a new reader on the reader pod is still granted.
			if until := primeAt + 850*time.Millisecond - s.Elapsed(); until > 0 {
				_ = s.Sleep(ctx, time.Duration(s.Rand().Int64N(int64(until))))
			}
			insideAt := s.Elapsed()
			ok, err := w.Granted(ctx, reader, 3, k, fresh, ch)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("OC-3: %s: a new reader was denied %v after priming, inside the %v window: the window the seed accepts was not observed", kind, insideAt-primeAt, time.Second)
			}
			observed[kind] = true
			oldest.Observe((insideAt - revokedAt).Seconds(), func() string {
				return fmt.Sprintf("%s: new reader granted %s %v after the revocation committed (primed at +%v)", kind, relay.Short(ch), insideAt-revokedAt, primeAt)
			})
			// 4. Age the cached set past the limit. 5. Both readers are denied.
			_ = s.Sleep(ctx, primeAt+time.Second+100*time.Millisecond-s.Elapsed())
			for _, r := range []authz.ID{late, primed} {
				ok, err := w.Granted(ctx, reader, 4, k, r, ch)
				if err != nil {
					return err
				}
				if ok {
					return fmt.Errorf("OC-2: %s: reader %s still granted %s %v after priming, past the 1s window", kind, relay.Short(r), relay.Short(ch), s.Elapsed()-primeAt)
				}
			}
		}
		return nil
	})
	observed := map[relay.Change]int{}
	for _, seen := range observedPer.Values() {
		for _, kind := range revocations {
			if seen[kind] {
				observed[kind]++
			}
		}
	}
	all := sum.Failures == 0
	for _, kind := range revocations {
		all = all && observed[kind] == sum.Seeds
	}
	claims.Report(t, claims.Record{
		ID: "OC-3", Verdict: claims.Verdict(all),
		Measured: fmt.Sprintf("a new reader was granted a revoked channel inside the window in %d/%d (private), %d/%d (deleted), %d/%d (unlisted) runs; latest such grant %v after the revocation",
			observed[relay.MakePrivate], sum.Seeds, observed[relay.Delete], sum.Seeds, observed[relay.Unlist], sum.Seeds, secs(oldest.Value)),
		Bound: "observed in every run, for every revocation kind", Value: oldest.Value, Unit: "s", Seeds: sum.Seeds,
		Witness: oldest.Witness,
		Note:    "the seed's a_lost_open_set_invalidation_grants_a_revoked_channel_only_until_max_age flow; after the window the new and the earlier-cached reader are both denied (OC-2)",
	})
}

package oc

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/stale"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// revocations are the three ways an open channel stops being open to a
// non-member: made private, deleted, unlisted.
var revocations = []pods.Change{pods.MakePrivate, pods.Delete, pods.Unlist}

// openRace is one revocation raced against a cold open-set read (see
// pods.Race): the reading pod's open-set read takes its snapshot at t0, the
// revocation commits at t0 right after it, and new readers probe the pod
// from inside the window to past its end.
type openRace struct {
	kind    pods.Change
	channel authz.ID
	res     pods.RaceResult
	// stale is the largest staleness of a grant a probe got.
	stale time.Duration
}

// openRaceWorld builds the deployment of the open-set races: one community
// whose channels are open and listed. It has either two pods where the
// reading pod never hears the writer's invalidations (OC-2, OC-3: the lost
// invalidation), or one pod with reliable invalidation where the
// revocation's local drop lands while the read is in flight (OC-4: the
// raced fill).
func openRaceWorld(s *sim.Sim, onePod bool, channels int) (*pods.World, authz.ID, error) {
	k := authz.NewID('k', 1)
	tables := authztest.NewTables()
	for i := range channels {
		if err := tables.AddChannel(authztest.Channel{ID: authz.NewID('o', uint64(i+1)), Community: k, Open: true, Listed: true}); err != nil {
			return nil, k, err
		}
	}
	cfg := pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency},
		PodFaults: []simbus.Faults{simbus.Reliable(), {LossProb: 1}}}
	if onePod {
		cfg = pods.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency}, Bus: simbus.Config{Faults: simbus.Reliable()}}
	}
	w, err := pods.NewWorld(s, cfg, tables)
	return w, k, err
}

// raceOpen runs one open-set race per kind, in a seeded order, each on its
// own channel and with a seeded read latency, separated by pauses longer
// than the window so that every race starts with a cold open set. The
// probes are new non-member readers (no cache entry of their own) at
// pods.WindowOffsets of the bound; the reader who primed the set probes
// last, past the window.
func raceOpen(s *sim.Sim, w *pods.World, k authz.ID, bound time.Duration, kinds []pods.Change) ([]openRace, error) {
	ctx := context.Background()
	offsets := pods.WindowOffsets(bound, 0)
	var races []openRace
	for n, kind := range kinds {
		ch := authz.NewID('o', uint64(n+1))
		probes := make([]authz.ID, len(offsets))
		primer := authz.NewID('r', uint64(1000*(n+1)))
		for i := range probes {
			probes[i] = authz.NewID('r', uint64(1000*(n+1)+i+1))
		}
		probes[len(probes)-1] = primer // the earlier-cached reader is denied too, once the window ended
		latency := 50*time.Millisecond + time.Duration(s.Rand().Int64N(int64(bound*9/10)))
		r, err := openSetRace(w, k, ch, kind, latency, offsets, primer, probes)
		if err != nil {
			return nil, err
		}
		race := openRace{kind: kind, channel: ch}
		race.res, err = w.Race(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s race: %w", kind, err)
		}
		races = append(races, race)
		// Past the window (and the probes' own re-reads): the next race
		// starts cold.
		_ = s.Sleep(ctx, 2*bound)
	}
	return races, nil
}

// openSetRace is the race of an open-set read on the last pod, which asks,
// against kind committed by the first: primer starts the cold read and
// new non-member readers probes[i] ask at offsets[i], all of them tracked
// as non-members of ch.
func openSetRace(w *pods.World, k, ch authz.ID, kind pods.Change, latency time.Duration, offsets []time.Duration, primer authz.ID, probes []authz.ID) (pods.Race, error) {
	reader, writer := w.Pods[len(w.Pods)-1], w.Pods[0]
	for _, r := range append(probes[:len(probes):len(probes)], primer) {
		if err := w.Track(pods.Key{Family: pods.OC, Community: k, Subject: r, Channel: ch}, pods.NonMember); err != nil {
			return pods.Race{}, err
		}
	}
	return pods.Race{
		Statement: pods.StmtListedOpenChannels, ReadLatency: latency,
		Change: kind, Community: k, Channel: ch, WritePod: writer,
		Prime: func(ctx context.Context) error {
			_, err := w.Accessible(ctx, reader, 1, k, primer)
			return err
		},
		Offsets: offsets, Instant: []string{pods.StmtMemberChannels},
		Probe: func(ctx context.Context, i int) error {
			_, err := w.Granted(ctx, reader, 2+i, k, probes[i], ch)
			return err
		},
	}, nil
}

// staleGrants fills each race's largest stale grant: the grant-staleness
// of the answers about its channel, from the exact checker.
func staleGrants(w *pods.World, b claims.Bound, races []openRace) error {
	for i := range races {
		r := &races[i]
		st, err := w.StalenessWhere(true, b.Duration()-time.Nanosecond, func(rd pods.ReadOp) bool {
			return rd.Key.Channel == r.channel && rd.Class == pods.NonMember
		})
		if err != nil {
			return fmt.Errorf("%s race: %w", r.kind, err)
		}
		r.stale = st.MaxStaleness
	}
	return nil
}

// nonMemberGrants is a seed's sample of grant-staleness over its
// non-member reads, judged by the exact checker and cross-checked with
// porcupine at the bound (minus 1 ns: the window is half-open).
func nonMemberGrants(w *pods.World, b claims.Bound) (claims.Sample, error) {
	st, err := w.Staleness(true, b.Duration()-time.Nanosecond, pods.NonMember)
	if err != nil {
		return claims.Sample{}, fmt.Errorf("%s: %w", b.Claim, err)
	}
	smp := stale.Sample(st.ClassReport, w.History.Describe)
	if !b.Holds(smp.Worst) && smp.Seen {
		return smp, fmt.Errorf("%s: grant-staleness %s breaks %s: %s", b.Claim, b.Format(smp.Worst), b, smp.Witness)
	}
	return smp, nil
}

package ms

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

var community = authz.NewID('c', 1)

// channel is channel i (1-based) of community.
func channel(i int) authz.ID { return authz.NewID('h', uint64(i)) }

// user is user i.
func user(i int) authz.ID { return authz.NewID('u', uint64(i)) }

// tablesOf returns nChannels private channels of community and, for each
// user i, memberships in the channels members[i] lists.
func tablesOf(nChannels int, members [][]int) (authztest.Tables, error) {
	t := authztest.NewTables()
	for i := 1; i <= nChannels; i++ {
		if err := t.AddChannel(authztest.Channel{ID: channel(i), Community: community}); err != nil {
			return t, err
		}
	}
	for u, chs := range members {
		for _, c := range chs {
			if err := t.SetMember(user(u+1), channel(c), true); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// onePod is a one-pod world on a reliable bus and a database with the
// given pool and latency and no injected faults unless its hook adds them.
func onePod(s *sim.Sim, tables authztest.Tables, db simdb.Config, cfg pods.Config) (*pods.World, error) {
	cfg.Pods = 1
	cfg.DB = db
	cfg.Bus = simbus.Config{Faults: simbus.Reliable()}
	s.Note("%s", db.String())
	return pods.NewWorld(s, cfg, tables)
}

// checkAll has `tasks` concurrent requests check the channels of u on pod,
// each request taking the next unchecked channel, and returns the answers
// that differed from want (or failed) and how many checks were made. Each
// check is an operation a shrinker may drop (sim.Keep, asked here, in
// order, before any request starts): callers judge the checks made, and a
// user with none made no request at all.
func checkAll(ctx context.Context, w *pods.World, pod *pods.Pod, tasks int, u authz.ID, channels []authz.ID, want func(authz.ID) bool) (wrong []string, made int) {
	s := w.S
	var kept []authz.ID
	for _, ch := range channels {
		// Labelled with the user: a failure that names the user lets a
		// shrinker keep that user's checks alone in one re-run.
		if s.KeepFor(sim.KeepOperation, pods.Short(u)) {
			kept = append(kept, ch)
		}
	}
	channels = kept
	next := 0
	wg := s.NewWaitGroup("checks")
	wg.Add(tasks)
	for i := range tasks {
		s.Go(fmt.Sprintf("check-%s-%d", pods.Short(u), i), func() {
			defer wg.Done()
			for next < len(channels) {
				ch := channels[next]
				next++
				op := record.NoEvent
				if s.Recording() {
					op = s.OpBegin("is_member(%s, %s)", pods.Short(u), pods.Short(ch))
				} else {
					s.OpBegin("")
				}
				got, err := pod.MS.IsMember(ctx, community, u, ch)
				if op != record.NoEvent {
					s.OpEnd(op, "%v %v", got, err)
				}
				switch {
				case err != nil:
					wrong = append(wrong, fmt.Sprintf("%s/%s: %v", pods.Short(u), pods.Short(ch), err))
				case got != want(ch):
					wrong = append(wrong, fmt.Sprintf("%s/%s: got %v, truth %v", pods.Short(u), pods.Short(ch), got, want(ch)))
				}
			}
		})
	}
	_ = wg.Wait(ctx)
	return wrong, len(channels)
}

// counts is what a membership claim compares, counted outside the cache
// by the simulated database (statements, rows, checkouts), and the cache's
// own metrics under the source text's names (series.Table) where a claim
// is about them.
type counts struct {
	loads, points, checkouts int64
	hits, misses             int64
	oversize, waitTimeout    int64
}

var (
	seriesHits        = series.Of("membership_cache_hits")[0]
	seriesMisses      = series.Of("membership_cache_misses")[0]
	seriesFallbacks   = series.Of("membership_cache_fallbacks")
	seriesOversize    = fallbackSeries("oversize")
	seriesWaitTimeout = fallbackSeries("wait_timeout")
)

// fallbackSeries is the table's fallbacks series with the given reason.
func fallbackSeries(reason string) string {
	for _, s := range seriesFallbacks {
		if s == fmt.Sprintf("membership_cache_fallbacks_total{reason=%q}", reason) {
			return s
		}
	}
	panic("ms: the claims table names no fallbacks reason " + reason)
}

// countMS counts what the database ran and what pod's membership cache
// exports. The metrics are read as a Prometheus server reads them
// (series.Scrape: the text exposition through the Prometheus parser, every
// series the claims table names with its type), never from the registry's
// own snapshot. MS-1, MS-4 and MS-6 are about the series a dashboard sees.
// So an exposition no scraper parses (an unquoted label value) or that
// lacks a series fails here, whatever the registry counted.
func countMS(w *pods.World, pod *pods.Pod) (counts, error) {
	m, err := series.Scrape(pod.MS.Metrics(), "membership_cache")
	if err != nil {
		return counts{}, fmt.Errorf("the membership cache's metrics: %w", err)
	}
	return counts{
		loads:       w.DB.StatementsOf(pods.StmtActiveMemberships),
		points:      w.DB.StatementsOf(pods.StmtIsActiveMember),
		checkouts:   w.DB.Stats().Checkouts,
		hits:        m[seriesHits],
		misses:      m[seriesMisses],
		oversize:    m[seriesOversize],
		waitTimeout: m[seriesWaitTimeout],
	}, nil
}

// registered checks that every series the source text names for the
// membership cache is in its exposition, with the table's type, and that
// the exposition parses (series.Scrape).
func registered(pod *pods.Pod) error {
	_, err := series.Scrape(pod.MS.Metrics(), "membership_cache")
	return err
}

func (a counts) sub(b counts) counts {
	return counts{a.loads - b.loads, a.points - b.points, a.checkouts - b.checkouts,
		a.hits - b.hits, a.misses - b.misses, a.oversize - b.oversize, a.waitTimeout - b.waitTimeout}
}

func (a counts) String() string {
	return fmt.Sprintf("%d membership loads, %d point checks, %d checkouts; cache hits %d, misses %d, fallbacks oversize %d, wait_timeout %d",
		a.loads, a.points, a.checkouts, a.hits, a.misses, a.oversize, a.waitTimeout)
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

var _ = membership.Snapshot

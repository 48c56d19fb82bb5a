package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// The seed's fixture: one community with 2,000 listed open channels.
const (
	burstOpenChannels = 2000
	burstReaders      = 600
	burstPods         = 2
	burstSpan         = 10 * time.Second
)

type arrival struct {
	at     time.Duration
	reader authz.ID
	pod    int
}

// burstTables builds the fixture: 2,000 open channels and, for every
// reader, a few private channels it is a member of.
func burstTables(k authz.ID) (relay.Tables, error) {
	t := relay.NewTables()
	for i := range burstOpenChannels {
		if err := t.AddChannel(relay.Channel{ID: authz.NewID('o', uint64(i+1)), Community: k, Open: true, Listed: true}); err != nil {
			return t, err
		}
	}
	for i := range 50 {
		if err := t.AddChannel(relay.Channel{ID: authz.NewID('p', uint64(i+1)), Community: k}); err != nil {
			return t, err
		}
	}
	for r := range burstReaders {
		for j := range 3 {
			if err := t.SetMember(authz.NewID('r', uint64(r+1)), authz.NewID('p', uint64((r*7+j*13)%50+1)), true); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

type accessor interface {
	Accessible(ctx context.Context, community, reader authz.ID) ([]authz.ID, error)
}

// flyBurst replays the arrivals against one cache per pod and returns the
// database's rows and statements, and the open-set reads per pod.
func flyBurst(s *sim.Sim, k authz.ID, arrivals []arrival, mk func(relay.Store) (accessor, error)) (rows, stmts int64, openReads int64, err error) {
	tables, err := burstTables(k)
	if err != nil {
		return 0, 0, 0, err
	}
	w, err := relay.NewWorld(s, relay.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency, PoolSize: 50}}, tables)
	if err != nil {
		return 0, 0, 0, err
	}
	caches := make([]accessor, burstPods)
	for i := range caches {
		if caches[i], err = mk(w.Store); err != nil {
			return 0, 0, 0, err
		}
	}
	ctx := context.Background()
	start := s.Elapsed()
	wg := s.NewWaitGroup("burst")
	wg.Add(len(arrivals))
	for i, a := range arrivals {
		s.Go(fmt.Sprintf("client%d", i), func() {
			defer wg.Done()
			_ = s.Sleep(ctx, start+a.at-s.Elapsed())
			if _, err := caches[a.pod].Accessible(ctx, k, a.reader); err != nil {
				s.Failf("OC-8: lookup failed without faults: %v", err)
			}
		})
	}
	_ = wg.Wait(ctx)
	st := w.DB.Stats()
	return st.Rows, st.Statements, w.DB.StatementsOf(relay.StmtListedOpenChannels), nil
}

// OC-8: a cold burst of readers on a community with 2,000 open channels
// reads far fewer database rows than the per-reader union design it
// replaces (the seed: 1.04M vs 43k–49k tuples/s), and open-set reads happen
// at most about once per second per community per pod. Same seed, same
// arrivals, counted rows.
func TestOC8_ColdBurstLoad(t *testing.T) {
	var ratio claims.Max
	var detail string
	worstRatio := 0.0
	sum := simtest.Run(t, simtest.Options{Seeds: 5}, func(s *sim.Sim) error {
		k := authz.NewID('k', 1)
		arrivals := make([]arrival, burstReaders)
		for i := range arrivals {
			arrivals[i] = arrival{at: time.Duration(s.Rand().Int64N(int64(burstSpan))), reader: authz.NewID('r', uint64(i+1)), pod: s.Rand().IntN(burstPods)}
		}
		newRows, newStmts, openReads, err := flyBurst(s, k, arrivals, func(st relay.Store) (accessor, error) {
			return accesschannelsNew(s, st)
		})
		if err != nil {
			return err
		}
		oldRows, oldStmts, _, err := flyBurst(s, k, arrivals, func(st relay.Store) (accessor, error) {
			return model.NewUnionCache(s, st, model.UnionConfig{})
		})
		if err != nil {
			return err
		}
		r := float64(oldRows) / float64(newRows)
		if worstRatio == 0 || r < worstRatio {
			worstRatio = r
			detail = fmt.Sprintf("seed %#x: %d readers over %v on %d pods: union-per-reader read %d rows in %d statements, the split design %d rows in %d statements (%d open-set reads)",
				s.Seed(), burstReaders, burstSpan, burstPods, oldRows, oldStmts, newRows, newStmts, openReads)
		}
		ratio.Observe(-r, nil)
		// At most about one open-set read per second per pod: the span,
		// plus one for the read that starts it.
		maxReads := int64(burstPods) * (int64(burstSpan/time.Second) + 2)
		if openReads > maxReads {
			return fmt.Errorf("OC-8: %d open-set reads for %d pods over %v: more than about one per second per pod (%d)", openReads, burstPods, burstSpan, maxReads)
		}
		if r < 20 {
			return fmt.Errorf("OC-8: the split design read only %.1fx fewer rows than the union-per-reader design (want ≥ 20x): %s", r, detail)
		}
		return nil
	})
	claims.Report(t, claims.Record{
		ID: "OC-8", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("%.1fx fewer rows than union-per-reader (worst seed)", worstRatio),
		Bound:    "≥ 20x fewer rows; ≤ ~1 open-set read/s per pod", Value: worstRatio, Unit: "x", Seeds: sum.Seeds, Witness: detail,
		Note: "the seed measured 1.04M vs 43k–49k tuples/s (~21–24x) for 48k clients; the ratio follows the cold readers per second per pod (the open set is read about once per second per pod), here 30 per pod per second; the seed's burst was denser",
	})
}

package ms

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS1_AnswersForChannelIDsOfAnyShape checks MS-1's answers with
// channel IDs shaped as the database's UUIDs are: random (version 4), or
// sharing their last 8 bytes (version 1, one host's clock sequence and
// node). The other checks' IDs (authz.NewID) differ only in their last 8
// bytes, so a snapshot ordered or searched by those bytes alone would
// still answer them right. A cold user
// in some of 2–300 such channels checks every channel of the community; one
// load, and every answer the tables'.
func TestMS1_AnswersForChannelIDsOfAnyShape(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-1", Bound: "reads per cold client", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, b claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			r := s.Rand()
			tables := authztest.NewTables()
			n := 2 + r.IntN(299)
			chans := make([]authz.ID, n)
			member := map[authz.ID]bool{}
			u := user(1)
			// Version-1 UUIDs of one host share their last 8 bytes (clock
			// sequence and node); version-4 ones are random throughout.
			var node [8]byte
			for j := range node {
				node[j] = byte(r.IntN(256))
			}
			for i := range chans {
				for j := range chans[i] {
					chans[i][j] = byte(r.IntN(256))
				}
				if r.IntN(2) == 0 {
					copy(chans[i][8:], node[:])
				}
				if err := tables.AddChannel(authztest.Channel{ID: chans[i], Community: community}); err != nil {
					return smp, err
				}
				if r.IntN(2) == 0 {
					member[chans[i]] = true
					if err := tables.SetMember(u, chans[i], true); err != nil {
						return smp, err
					}
				}
			}
			w, err := onePod(s, tables, simdb.Config{PoolSize: 4}, pods.Config{})
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			wrong, made := checkAll(context.Background(), w, pod, 1+r.IntN(8), u, chans, func(c authz.ID) bool { return member[c] })
			d, err := countMS(w, pod)
			if err != nil {
				return smp, fmt.Errorf("MS-1: %w", err)
			}
			smp.Observe(float64(d.loads), func() string {
				return fmt.Sprintf("a cold user in %d of %d channels with UUID-shaped IDs: %s", len(member), n, d)
			})
			smp.Of = int64(made)
			switch {
			case len(wrong) > 0:
				return smp, fmt.Errorf("MS-1: %d of %d answers for UUID-shaped channel IDs were wrong, e.g. %s", len(wrong), made, wrong[0])
			case made > 0 && d.loads != b.Int():
				return smp, fmt.Errorf("MS-1: a cold user's %d checks caused %s; want %d load", made, d, b.Int())
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s membership reads for a cold user over %d checks of channels with UUID-shaped IDs", o.WorstText(), o.Of)
		},
	})
}

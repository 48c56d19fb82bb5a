package oc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC9_ExpiredEntryFreesItsPlace checks that a member half found
// expired leaves the cache at once, even when its re-read fails: it must
// not keep a place a fresh entry needs. The cache holds a seeded capacity
// of member halves. One reader's half is filled first and read again
// after the others were filled, so it is the most recently used when it
// expires, before them. It is then read with the member query failing.
// One more reader's half then fits without evicting anyone, and every
// other half is still a hit: the database's own count of member reads
// must not move. A cache that kept the expired half evicts the least
// recently used fresh one instead, and its reader reads the database
// again.
func TestOC9_ExpiredEntryFreesItsPlace(t *testing.T) {
	ttl := claims.Get("OC-7", "member ttl").Duration()
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-9", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			smp := claims.Sample{Seen: true}
			ctx := context.Background()
			r := s.Rand()
			c := pods.DefaultChurn()
			tables, err := c.Tables()
			if err != nil {
				return smp, err
			}
			readers := append(append([]authz.ID{}, c.Members...), c.NonMembers...)
			capacity := 2 + r.IntN(len(readers)-2) // the expired half, the others, and one more reader
			down := false
			errDown := errors.New("harness: the member query fails")
			db := simdb.Config{Hook: func(st simdb.Statement) simdb.Fault {
				if down && st.Name == pods.StmtMemberChannels {
					return simdb.Fault{Err: errDown, Required: true}
				}
				return simdb.Fault{}
			}}
			w, err := pods.NewWorld(s, pods.Config{Pods: 1, DB: db, OC: accesschannels.Config{MemberCapacity: capacity}}, tables)
			if err != nil {
				return smp, err
			}
			pod := w.Pods[0]
			read := func(u authz.ID) error {
				_, err := pod.OC.Accessible(ctx, c.Community, u)
				return err
			}
			expired, others, extra := readers[0], readers[1:capacity], readers[capacity]
			start := s.Elapsed()
			if err := read(expired); err != nil {
				return smp, err
			}
			for _, u := range others {
				_ = s.Sleep(ctx, 1+time.Duration(r.Int64N(int64(ttl/time.Duration(4*len(others))))))
				if err := read(u); err != nil {
					return smp, err
				}
			}
			if err := read(expired); err != nil { // a hit: now the most recently used
				return smp, err
			}
			// The expired half's TTL has passed (the database answers at
			// once, so it was filled at start); no other half's has.
			_ = s.Sleep(ctx, start+ttl-s.Elapsed())
			down = true
			if err := read(expired); !errors.Is(err, errDown) {
				return smp, fmt.Errorf("harness: reading the expired half with the member query failing: got %v, want its error", err)
			}
			down = false
			if err := read(extra); err != nil {
				return smp, err
			}
			before := w.DB.StatementsOf(pods.StmtMemberChannels)
			for _, u := range others {
				if err := read(u); err != nil {
					return smp, err
				}
			}
			reread := w.DB.StatementsOf(pods.StmtMemberChannels) - before
			what := fmt.Sprintf("capacity %d: %d fresh member halves read again at +%v after one expired half's failed re-read and one more reader: %d read the database again", capacity, len(others), s.Elapsed(), reread)
			smp.Of++
			smp.Observe(float64(reread), func() string { return what })
			if reread != 0 {
				smp.Wrongly(func() string { return what })
				return smp, fmt.Errorf("OC-9: %s; want 0: the expired half kept a place", what)
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("fresh member halves evicted for an expired one over %d seeds: %d wrong, %d failed", o.Seeds, o.Wrong, o.Failed)
		},
	})
}

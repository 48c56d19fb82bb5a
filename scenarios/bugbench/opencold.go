package bugbench

import (
	"context"
	"fmt"
	"slices"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// OpenShared is OC-8's shared open set under membership churn: readers
// sweep the same communities in the same order while a churner delivers
// membership invalidations of those readers (a membership invalidation
// drops only that reader's member half, OC-5). Within one window a
// community's open set is read once however the cold lookups meet, and
// every answer is the database's member channels ∪ listed open channels
// (OC-1; nothing changes in the database).
var OpenShared = &Workload{Name: "openset-shared", Claim: "OC-8", Run: openShared, Selected: ocSelected}

func openShared(r rt.Runtime) error {
	const communities, readers, opens, sweeps = 3, 4, 2, 2
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	db := authztest.New(r)
	for c := 1; c <= communities; c++ {
		for o := 1; o <= opens; o++ {
			id := authz.NewID('o', uint64(10*c+o))
			if err := db.AddChannel(authztest.Channel{ID: id, Community: ocCommunity(c), Open: true, Listed: true}); err != nil {
				return err
			}
		}
		// Each reader is a member of a private channel of its own.
		for i := 1; i <= readers; i++ {
			id := authz.NewID('p', uint64(10*c+i))
			if err := db.AddChannel(authztest.Channel{ID: id, Community: ocCommunity(c)}); err != nil {
				return err
			}
			if err := db.SetMember(ocReader(i), id, true); err != nil {
				return err
			}
		}
	}
	base := authztest.NewLocked(r, db)
	pool := newTapPool(r, base, nil)
	cache, err := accesschannels.New(r, pool, accesschannels.Config{MaxAgeOpen: maxAge})
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := r.Now()
	errs := make([]error, readers) // each reader's own slot
	wg := r.NewWaitGroup("bugbench.openshared")
	wg.Add(readers + 1)
	for i := 1; i <= readers; i++ {
		r.Go(fmt.Sprint("reader-", i), func() {
			defer wg.Done()
			for range sweeps {
				for c := 1; c <= communities; c++ {
					got, err := cache.Accessible(ctx, ocCommunity(c), ocReader(i))
					if err == nil {
						err = ocTruth(base, c, i, got)
					}
					if err != nil {
						errs[i-1] = err
						return
					}
					r.Yield()
				}
			}
		})
	}
	r.Go("churner", func() {
		defer wg.Done()
		for c := 1; c <= communities; c++ {
			for i := 1; i <= readers; i++ {
				cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: ocCommunity(c), UserID: ocReader(i), ChannelID: authz.NewID('p', uint64(10*c+i))})
				r.Yield()
			}
		}
	})
	if err := wg.Wait(ctx); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// A run on real goroutines slower than the window may read again by
	// right; such a run cannot judge OC-8 (a simulated one never is).
	if r.Now().Sub(start) >= maxAge {
		return nil
	}
	for c := 1; c <= communities; c++ {
		if n := pool.count(stmtKey{stmt: "open", community: ocCommunity(c)}); n != 1 {
			return fmt.Errorf("OC-8: %d readers' lookups of community %d within one window read its open set %d times, want 1", readers, c, n)
		}
	}
	return nil
}

// ocTruth compares an answer with the database's: member channels ∪ listed
// open channels, sorted (OC-1).
func ocTruth(pool *authztest.Locked, c, reader int, got []authz.ID) error {
	var want []authz.ID
	pool.Write(func(db *authztest.DB) {
		t := db.Tables()
		want = append(t.MemberChannels(ocCommunity(c), ocReader(reader), -1), t.ListedOpenChannels(ocCommunity(c))...)
	})
	slices.SortFunc(want, authz.Compare)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("OC-1: reader %d in community %d got %v, the database says %v", reader, c, got, want)
	}
	return nil
}

package bugbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// cancelDelay is how long the first read of each key takes in the cancel
// workloads; an impatient caller gives up half-way through it.
const cancelDelay = 10 * time.Millisecond

// OpenAbandoned is OC-1 under a caller who gives up: in each community an
// impatient reader's lookup is cancelled half-way through the first
// open-set read, while two patient readers look up the same community at
// once and again later. Whoever's read they join, the patient readers are
// granted the open channel without an error: a read abandoned by its
// caller's cancellation is started over, not shared as a failure.
var OpenAbandoned = &Workload{Name: "openset-abandoned", Claim: "OC-1", Run: openAbandoned, Selected: ocSelected}

func openAbandoned(r rt.Runtime) error {
	const communities = 3
	db := authztest.New(r)
	for c := 1; c <= communities; c++ {
		if err := db.AddChannel(authztest.Channel{ID: ocOpen(c), Community: ocCommunity(c), Open: true, Listed: true}); err != nil {
			return err
		}
	}
	pool := newTapPool(r, authztest.NewLocked(r, db), firstSlow("open"))
	cache, err := accesschannels.New(r, pool, accesschannels.Config{MaxAgeOpen: claims.Get("OC-2", "open set max age").Duration()})
	if err != nil {
		return err
	}
	return impatient(r, communities, func(ctx context.Context, c, reader int) error {
		got, err := cache.Granted(ctx, ocCommunity(c), ocReader(reader), ocOpen(c))
		if err == nil && !got {
			err = fmt.Errorf("OC-1: community %d's open channel denied to reader %d", c, reader)
		}
		return err
	})
}

// MembershipCancel is MS-7 under a caller who gives up: for each user an
// impatient check is cancelled half-way through the first load of the
// user's channels, while two patient checks ask at once and again later.
// Every patient answer is the database's, and none falls back to a point
// check: a cancelled load frees the user's lock and caches nothing, so the
// next check loads again at once.
var MembershipCancel = &Workload{Name: "membership-cancel", Claim: "MS-7", Run: membershipCancel, Selected: msSelected}

func membershipCancel(r rt.Runtime) error {
	const users, channel = 3, 1
	db := authztest.New(r)
	if err := db.AddChannel(authztest.Channel{ID: msChannel(channel), Community: msCommunity}); err != nil {
		return err
	}
	for u := 1; u <= users; u++ {
		if err := db.SetMember(msUser(u), msChannel(channel), true); err != nil {
			return err
		}
	}
	pool := newTapPool(r, authztest.NewLocked(r, db), firstSlow("load"))
	// A waiter gives up on a load a hundred times slower than these.
	cache, err := membership.New(r, pool, membership.Config{LockWait: 100 * cancelDelay})
	if err != nil {
		return err
	}
	err = impatient(r, users, func(ctx context.Context, u, _ int) error {
		got, err := cache.IsMember(ctx, msCommunity, msUser(u), msChannel(channel))
		if err == nil && !got {
			err = fmt.Errorf("MS-7: u%d's membership denied, the database grants it", u)
		}
		return err
	})
	if err != nil {
		return err
	}
	for u := 1; u <= users; u++ {
		if n := pool.count(stmtKey{stmt: "point", community: msCommunity, user: msUser(u)}); n != 0 {
			return fmt.Errorf("MS-7: u%d's checks fell back to %d point checks: a cancelled load kept its lock", u, n)
		}
	}
	return nil
}

// firstSlow delays the first statement stmt of each key by cancelDelay.
func firstSlow(stmt string) func(stmtKey, int) time.Duration {
	return func(k stmtKey, n int) time.Duration {
		if k.stmt == stmt && n == 0 {
			return cancelDelay
		}
		return 0
	}
}

// impatient runs, for each of keys, one lookup cancelled half-way through
// cancelDelay and two patient lookups at once and again after cancelDelay.
// A patient lookup's error fails the run; the impatient one may end in its
// own cancellation or succeed.
func impatient(r rt.Runtime, keys int, lookup func(ctx context.Context, key, reader int) error) error {
	const patient = 2
	errs := make([]error, keys*(patient+1)) // each goroutine's own slot
	wg := r.NewWaitGroup("bugbench.impatient")
	wg.Add(keys * (patient + 2)) // and a canceller each
	for k := 1; k <= keys; k++ {
		slot := (k - 1) * (patient + 1)
		ctx, cancel := r.WithCancel(context.Background())
		r.Go(fmt.Sprint("canceller-", k), func() {
			defer wg.Done()
			_ = r.Sleep(context.Background(), cancelDelay/2)
			cancel()
		})
		r.Go(fmt.Sprint("impatient-", k), func() {
			defer wg.Done()
			if err := lookup(ctx, k, 1); err != nil && !errors.Is(err, context.Canceled) {
				errs[slot] = fmt.Errorf("the impatient lookup of %d: %w", k, err)
			}
		})
		for p := 1; p <= patient; p++ {
			r.Go(fmt.Sprint("patient-", k, "-", p), func() {
				defer wg.Done()
				for i := range 2 {
					if i > 0 {
						_ = r.Sleep(context.Background(), cancelDelay)
					}
					if err := lookup(context.Background(), k, 1+p); err != nil {
						errs[slot+p] = fmt.Errorf("patient lookup %d of %d: %w", i+1, k, err)
						return
					}
				}
			})
		}
	}
	if err := wg.Wait(context.Background()); err != nil {
		return err
	}
	return errors.Join(errs...)
}

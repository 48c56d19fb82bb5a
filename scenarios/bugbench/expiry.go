package bugbench

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// MembershipExpiry is MS-2's freshness bound with a lost invalidation, for
// two users at once: each user's channels are loaded (a check), a
// membership is revoked in the database with no invalidation, and a check
// a quarter-bound past the bound, counted from the load's connection
// checkout, must see the revocation. The first user's load is fast; the
// second's answer comes back half a bound after its rows were read. The
// failure hangs on time: on real goroutines each run costs the bound's
// real seconds and a quarter.
var MembershipExpiry = &Workload{Name: "membership-expiry", Claim: "MS-2", Run: membershipExpiry, Selected: msSelected,
	Waits: claims.Get("MS-2", "freshness").Duration() * 5 / 4}

func membershipExpiry(r rt.Runtime) error {
	fresh := claims.Get("MS-2", "freshness").Duration()
	const fastUser, slowUser, channel = 1, 2, 1
	db := authztest.New(r)
	if err := db.AddChannel(authztest.Channel{ID: msChannel(channel), Community: msCommunity}); err != nil {
		return err
	}
	for u := fastUser; u <= slowUser; u++ {
		if err := db.SetMember(msUser(u), msChannel(channel), true); err != nil {
			return err
		}
	}
	base := authztest.NewLocked(r, db)
	pool := newTapPool(r, base, func(k stmtKey, n int) time.Duration {
		if k.stmt == "load" && k.user == msUser(slowUser) && n == 0 {
			return fresh / 2
		}
		return 0
	})
	cache, err := membership.New(r, pool, membership.Config{Freshness: fresh, LockWait: 2 * fresh})
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := r.Now()
	errs := make([]error, 2) // each user's own slot
	wg := r.NewWaitGroup("bugbench.expiry")
	wg.Add(2)
	for u := fastUser; u <= slowUser; u++ {
		r.Go(fmt.Sprint("user-", u), func() {
			defer wg.Done()
			errs[u-1] = func() error {
				check := func(want bool, when string) error {
					got, err := cache.IsMember(ctx, msCommunity, msUser(u), msChannel(channel))
					if err != nil {
						return fmt.Errorf("u%d: %w", u, err)
					}
					if got != want {
						return fmt.Errorf("MS-2: u%d's membership answered %v %s, want %v (freshness %v)", u, got, when, want, fresh)
					}
					return nil
				}
				if err := check(true, "before the revocation"); err != nil {
					return err
				}
				base.Write(func(db *authztest.DB) { _ = db.SetMember(msUser(u), msChannel(channel), false) })
				if err := r.Sleep(ctx, start.Add(fresh+fresh/4).Sub(r.Now())); err != nil {
					return err
				}
				return check(false, "a bound and a quarter after its load's checkout")
			}()
		})
	}
	if err := wg.Wait(ctx); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

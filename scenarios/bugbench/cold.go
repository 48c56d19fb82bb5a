package bugbench

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// MembershipCold is MS-5's shared load: readers sweep the same users in the
// same order, so their first checks of a user, all cold, meet at the
// user's loading entry. However they meet, the database reads each user's
// channels once (nothing is invalidated, evicted or expired): a waiter
// that gets the entry's lock rechecks instead of reading again.
var MembershipCold = &Workload{Name: "membership-cold", Claim: "MS-5", Run: membershipCold, Selected: msSelected}

func membershipCold(r rt.Runtime) error {
	const users, channels, readers = 8, 6, 4
	db := authztest.New(r)
	for c := 1; c <= channels; c++ {
		if err := db.AddChannel(authztest.Channel{ID: msChannel(c), Community: msCommunity}); err != nil {
			return err
		}
	}
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			if err := db.SetMember(msUser(u), msChannel(c), (u+c)%2 == 0); err != nil {
				return err
			}
		}
	}
	pool := &countingPool{Pool: authztest.NewLocked(r, db), mu: r.NewMutex("bugbench.reads"), reads: map[authz.ID]int{}}
	// Every user's snapshot fits under the cap (no point checks, which read
	// each time), all of them fit the budget, and no waiter gives up.
	cache, err := membership.New(r, pool, membership.Config{MaxSnapshotIDs: channels,
		BudgetBytes: 4 * users * membership.EntryWeight(membership.Snapshot, channels), LockWait: time.Hour})
	if err != nil {
		return err
	}
	ctx := context.Background()
	errs := make([]error, readers) // each reader's own slot
	wg := r.NewWaitGroup("bugbench.cold")
	wg.Add(readers)
	for i := range readers {
		r.Go(fmt.Sprint("reader-", i), func() {
			defer wg.Done()
			for u := 1; u <= users; u++ {
				c := 1 + (i+u)%channels
				if _, err := cache.IsMember(ctx, msCommunity, msUser(u), msChannel(c)); err != nil {
					errs[i] = fmt.Errorf("check u%d/c%d: %w", u, c, err)
					return
				}
				r.Yield()
			}
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
	for u := 1; u <= users; u++ {
		if n := pool.reads[msUser(u)]; n != 1 {
			return fmt.Errorf("MS-5: %d concurrent cold checks of u%d read its channels %d times, want 1", readers, u, n)
		}
	}
	return nil
}

// countingPool counts the reads of each user's channels, under a lock of
// the runtime: on real goroutines the readers' connections count at once.
type countingPool struct {
	authz.Pool
	mu    rt.Mutex
	reads map[authz.ID]int
}

func (p *countingPool) Acquire(ctx context.Context) (authz.Conn, error) {
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, p: p}, nil
}

type countingConn struct {
	authz.Conn
	p *countingPool
}

// ActiveMemberships is the membership cache's load of a user's channels.
func (c countingConn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	c.p.mu.Lock()
	c.p.reads[user]++
	c.p.mu.Unlock()
	return c.Conn.ActiveMemberships(ctx, community, user, limit)
}

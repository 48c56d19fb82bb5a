package ms

import (
	"context"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// setClock is a runtime whose clock the test sets.
type setClock struct {
	rt.Runtime
	now time.Time
}

func (c *setClock) Now() time.Time { return c.now }

// TestMS2_InspectSaysWhenAnEntryStopsAnswering loads a member's snapshot
// and reads its entry from outside (Cache.Inspect) on both sides of the
// instant the claims table's freshness ends it: fresh until then, not
// fresh from then on, without the read touching it. The other checks only
// see the answers a stale entry no longer gives, never what Inspect says
// of one.
func TestMS2_InspectSaysWhenAnEntryStopsAnswering(t *testing.T) {
	fresh := claims.Get("MS-2", "freshness").Duration()
	clock := &setClock{Runtime: rt.Real(), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db := authztest.New(clock)
	community, user, channel := authz.NewID('k', 1), authz.NewID('u', 1), authz.NewID('c', 1)
	if err := db.AddChannel(authztest.Channel{ID: channel, Community: community}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMember(user, channel, true); err != nil {
		t.Fatal(err)
	}
	cache, err := membership.New(clock, authztest.NewLocked(clock, db), membership.Config{Freshness: fresh})
	if err != nil {
		t.Fatal(err)
	}
	start := clock.now
	if ok, err := cache.IsMember(context.Background(), community, user, channel); err != nil || !ok {
		t.Fatalf("MS-2: IsMember = %v, %v; the member was added", ok, err)
	}
	for _, c := range []struct {
		at    time.Duration
		fresh bool
	}{{0, true}, {fresh - time.Nanosecond, true}, {fresh, false}, {fresh + time.Hour, false}} {
		clock.now = start.Add(c.at)
		info, ok := cache.Inspect(community, user)
		switch {
		case !ok:
			t.Fatalf("MS-2: at +%v Inspect finds no entry (it must not remove one)", c.at)
		case info.Fresh != c.fresh:
			t.Errorf("MS-2: at +%v after the load, Inspect says fresh=%v; the freshness of %v from the checkout at +0s says %v", c.at, info.Fresh, fresh, c.fresh)
		}
	}
}

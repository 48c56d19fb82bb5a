package bugbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// OpenMaxAge is OC-2's window with a lost invalidation, in three
// communities at once. In each, an open channel is granted (the open set
// read and cached), then revoked in the database with no invalidation, and
// a lookup well past OPEN_CHANNELS_MAX_AGE after the read began must not
// grant it. The first community's read is fast; the second's answer comes
// back half a window after its rows were read (the age counts from the
// read's start); the third's first read takes longer than the window and a
// second reader asks while it is still in flight (it must not join it).
// The failure hangs on time, not on the interleaving: on real goroutines
// each run costs the window's real seconds.
var OpenMaxAge = &Workload{Name: "openset-max-age", Claim: "OC-2", Run: openMaxAge, Selected: ocSelected,
	Waits: claims.Get("OC-2", "open set max age").Duration() * 3 / 2}

// ocSelected: the cache's lock, its open-set reads' events and the
// database's statements (the pool's lock).
func ocSelected(obj string) bool {
	return strings.Contains(obj, "accesschannels.") || strings.HasPrefix(obj, "mutex authztest.locked#")
}

func ocCommunity(i int) authz.ID { return authz.NewID('c', uint64(100+i)) }
func ocOpen(i int) authz.ID      { return authz.NewID('o', uint64(100+i)) }
func ocReader(i int) authz.ID    { return authz.NewID('r', uint64(i)) }

func openMaxAge(r rt.Runtime) error {
	maxAge := claims.Get("OC-2", "open set max age").Duration()
	margin := maxAge / 4
	const fast, halfWindow, pastWindow = 1, 2, 3
	db := authztest.New(r)
	for c := fast; c <= pastWindow; c++ {
		if err := db.AddChannel(authztest.Channel{ID: ocOpen(c), Community: ocCommunity(c), Open: true, Listed: true}); err != nil {
			return err
		}
	}
	base := authztest.NewLocked(r, db)
	// Only each community's first open-set read is slow.
	pool := newTapPool(r, base, func(k stmtKey, n int) time.Duration {
		switch {
		case k.stmt != "open" || n > 0:
			return 0
		case k.community == ocCommunity(halfWindow):
			return maxAge / 2
		case k.community == ocCommunity(pastWindow):
			return maxAge + maxAge/2
		}
		return 0
	})
	cache, err := accesschannels.New(r, pool, accesschannels.Config{MaxAgeOpen: maxAge})
	if err != nil {
		return err
	}
	ctx := context.Background()
	revoke := func(c int) {
		base.Write(func(db *authztest.DB) {
			_ = db.UpdateChannel(ocOpen(c), func(ch *authztest.Channel) { ch.Open = false })
		})
	}
	// granted asks and wants the answer; a wrong one is OC-2's violation.
	granted := func(c, reader int, want bool, when string) error {
		got, err := cache.Granted(ctx, ocCommunity(c), ocReader(reader), ocOpen(c))
		if err != nil {
			return fmt.Errorf("community %d: %w", c, err)
		}
		if got != want {
			return fmt.Errorf("OC-2: community %d's open channel granted=%v %s, want %v (max age %v)", c, got, when, want, maxAge)
		}
		return nil
	}
	start := r.Now()
	steps := []struct {
		name string
		run  func() error
	}{
		{"fast", func() error {
			if err := granted(fast, 1, true, "before the revocation"); err != nil {
				return err
			}
			revoke(fast)
			if err := r.Sleep(ctx, maxAge+margin); err != nil {
				return err
			}
			return granted(fast, 1, false, "a window and a quarter after the read")
		}},
		{"half-window", func() error {
			if err := granted(halfWindow, 1, true, "before the revocation"); err != nil {
				return err
			}
			revoke(halfWindow)
			if err := r.Sleep(ctx, start.Add(maxAge+margin).Sub(r.Now())); err != nil {
				return err
			}
			return granted(halfWindow, 1, false, "a window and a quarter after its read began (its answer came half a window late)")
		}},
		{"in-flight", func() error {
			return granted(pastWindow, 1, true, "by the read slower than the window")
		}},
		{"late-joiner", func() error {
			if err := r.Sleep(ctx, maxAge+margin); err != nil {
				return err
			}
			revoke(pastWindow)
			return granted(pastWindow, 2, false, "to a reader who asked a window and a quarter after the read in flight began")
		}},
	}
	errs := make([]error, len(steps)) // each goroutine's own slot
	wg := r.NewWaitGroup("bugbench.maxage")
	wg.Add(len(steps))
	for i, st := range steps {
		r.Go(st.name, func() {
			defer wg.Done()
			errs[i] = st.run()
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

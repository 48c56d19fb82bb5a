package membership_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// op is one step of a generated sequential workload.
type op struct {
	Kind    string // "set", "delete", "check", "sleep", "all"
	User    int
	Channel int
	Active  bool
	Sleep   time.Duration
	Lost    bool // the write's invalidation is lost
}

func genOps(t *rapid.T, lossy bool) []op {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) op {
		o := op{
			Kind:    rapid.SampledFrom([]string{"set", "set", "check", "check", "check", "sleep", "delete", "all"}).Draw(t, "kind"),
			User:    rapid.IntRange(1, 2).Draw(t, "user"),
			Channel: rapid.IntRange(1, 5).Draw(t, "channel"),
			Active:  rapid.Bool().Draw(t, "active"),
			// Instants around the 10 s bound are the interesting ones.
			Sleep: rapid.SampledFrom([]time.Duration{time.Millisecond, time.Second, 5 * time.Second,
				10*time.Second - 1, 10 * time.Second, 11 * time.Second}).Draw(t, "sleep"),
		}
		if lossy {
			o.Lost = rapid.Bool().Draw(t, "lost")
		}
		return o
	}), 30, 150).Draw(t, "ops")
}

// change is one instant the truth of a (user, channel) question flipped.
type change struct {
	at    time.Duration
	value bool
}

// runOps runs ops in one task against a cache with MaxSnapshotIDs 3, so users
// cross between snapshots and markers. It returns a description of every
// check whose answer is not allowed. With reliable invalidation the answer
// must be the truth. With lost invalidations it may be stale by less than
// Freshness (MS-2, MS-10), never a value that was never true.
func runOps(ops []op) []string {
	const freshness = 10 * time.Second
	var bad []string
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		db := authztest.New(s)
		for i := 1; i <= 5; i++ {
			_ = db.AddChannel(authztest.Channel{ID: ch(i), Community: community})
		}
		c, _ := membership.New(s, db, membership.Config{MaxSnapshotIDs: 3, Freshness: freshness})
		type q struct{ user, channel int }
		history := map[q][]change{}
		deleted := map[int]bool{}
		truth := func(k q) bool {
			h := history[k]
			return len(h) > 0 && h[len(h)-1].value
		}
		record := func(k q, v bool) {
			if truth(k) != v {
				history[k] = append(history[k], change{s.Elapsed(), v})
			}
		}
		uid := func(n int) authz.ID { return authz.NewID('u', uint64(n)) }
		for i, o := range ops {
			k := q{o.User, o.Channel}
			switch o.Kind {
			case "set":
				_ = db.SetMember(uid(o.User), ch(o.Channel), o.Active)
				if !deleted[o.Channel] {
					record(k, o.Active)
				}
				if !o.Lost {
					c.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: uid(o.User), ChannelID: ch(o.Channel)})
				}
			case "delete":
				_ = db.UpdateChannel(ch(o.Channel), func(c *authztest.Channel) { c.Deleted = true })
				deleted[o.Channel] = true
				for u := 1; u <= 2; u++ {
					record(q{u, o.Channel}, false)
				}
				if !o.Lost {
					c.Invalidate(authz.Message{Kind: authz.KindChannelDeleted, CommunityID: community, ChannelID: ch(o.Channel)})
				}
			case "all":
				c.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
			case "sleep":
				_ = s.Sleep(bg, o.Sleep)
			case "check":
				got, err := c.IsMember(bg, community, uid(o.User), ch(o.Channel))
				if err != nil {
					bad = append(bad, fmt.Sprintf("op %d: %v", i, err))
					continue
				}
				if got == truth(k) {
					continue
				}
				// Stale: how long ago was got last true? It was true
				// until the latest change that made it false.
				h := history[k]
				stale, ok := time.Duration(-1), false
				for j := len(h) - 1; j >= 0; j-- {
					before := j > 0 && h[j-1].value
					if before == got {
						stale, ok = s.Elapsed()-h[j].at, true
						break
					}
				}
				if !ok || stale >= freshness || !o.Lost && !anyLost(ops[:i]) {
					bad = append(bad, fmt.Sprintf("op %d: check user %d channel %d = %v at %v, truth %v, stale %v (history %v)", i, o.User, o.Channel, got, s.Elapsed(), truth(k), stale, h))
				}
			}
		}
	})
	if res.Err != nil {
		bad = append(bad, res.Err.Error())
	}
	return bad
}

func anyLost(ops []op) bool {
	for _, o := range ops {
		if o.Lost {
			return true
		}
	}
	return false
}

// MS-3, MS-9: with every invalidation delivered, a sequential client always
// gets the database's current answer.
func TestSequentialChecksAreExactWithReliableInvalidation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if bad := runOps(genOps(t, false)); len(bad) > 0 {
			t.Fatalf("%d wrong answers:\n%v", len(bad), bad)
		}
	})
}

// MS-2, MS-10: with lost invalidations, a wrong answer is a stale one, by
// less than the 10 s freshness bound, grant or deny.
func TestLostInvalidationsAreStaleByLessThanFreshness(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if bad := runOps(genOps(t, true)); len(bad) > 0 {
			t.Fatalf("%d answers beyond the bound:\n%v", len(bad), bad)
		}
	})
}

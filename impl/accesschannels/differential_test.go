package accesschannels_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

// fixture is a random database of two communities.
type fixture struct {
	chans   []authztest.Channel
	members [][2]uint64 // (user, channel index)
	users   uint64
}

func genFixture(t *rapid.T) fixture {
	var f fixture
	n := rapid.IntRange(1, 12).Draw(t, "channels")
	for i := range n {
		f.chans = append(f.chans, authztest.Channel{
			ID:        ch(uint64(i + 1)),
			Community: []authz.ID{k1, k2}[rapid.IntRange(0, 1).Draw(t, "community")],
			Open:      rapid.Bool().Draw(t, "open"),
			Listed:    rapid.Bool().Draw(t, "listed"),
			Deleted:   rapid.IntRange(0, 5).Draw(t, "deleted") == 0,
		})
	}
	f.users = uint64(rapid.IntRange(1, 5).Draw(t, "users"))
	for u := uint64(1); u <= f.users; u++ {
		for i := range f.chans {
			if rapid.IntRange(0, 3).Draw(t, "member") == 0 {
				f.members = append(f.members, [2]uint64{u, uint64(i)})
			}
		}
	}
	return f
}

// truth computes accessible(community, user) from the fixture directly.
func (f fixture) truth(community authz.ID, u uint64) []authz.ID {
	var out []authz.ID
	for i, c := range f.chans {
		if c.Community != community || c.Deleted {
			continue
		}
		member := slices.Contains(f.members, [2]uint64{u, uint64(i)})
		if member || (c.Open && c.Listed) {
			out = append(out, c.ID)
		}
	}
	slices.SortFunc(out, authz.Compare)
	return out
}

// step is a sequential write followed by its (reliable) invalidation.
type step struct {
	user, chIdx uint64
	kind        int // 0 membership flip, 1 visibility flip, 2 listed flip, 3 delete
}

// OC-1 and OC-10, differential: with reliable invalidation and no concurrent
// writes, the cached answer equals the uncached DB union and the direct
// computation. That holds for every (community, reader), including readers
// with no member channels and members of the other community's channels. No
// answer contains a channel of another community. Writes interleave with
// lookups so cached halves are exercised between invalidations (OC-5).
func TestCachedEqualsUncachedUnion(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := genFixture(rt)
		steps := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) step {
			return step{
				user:  uint64(rapid.IntRange(1, int(f.users)).Draw(rt, "u")),
				chIdx: uint64(rapid.IntRange(0, len(f.chans)-1).Draw(rt, "c")),
				kind:  rapid.IntRange(0, 3).Draw(rt, "kind"),
			}
		}), 0, 8).Draw(rt, "steps")
		seed := rapid.Uint64().Draw(rt, "seed")

		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			db := authztest.New(s)
			mustAdd(s, db, f.chans...)
			for _, m := range f.members {
				mustMember(s, db, user(m[0]), f.chans[m[1]].ID)
			}
			c := mustCache(s, db, accesschannels.Config{})
			check := func(when string) {
				// users up to f.users+1: the last has no member channel at all.
				for u := uint64(1); u <= f.users+1; u++ {
					for _, k := range []authz.ID{k1, k2} {
						got := accessible(s, c, k, user(u))
						unc, err := c.AccessibleUncached(bg, k, user(u))
						if err != nil {
							s.Failf("uncached: %v", err)
						}
						want := f.truth(k, u)
						if !slices.Equal(got, unc) || !slices.Equal(got, want) {
							rt.Errorf("%s: community %v user %d: cached %v, uncached %v, truth %v", when, k, u, got, unc, want)
						}
						for _, id := range got {
							i := slices.IndexFunc(f.chans, func(x authztest.Channel) bool { return x.ID == id })
							if f.chans[i].Community != k {
								rt.Errorf("OC-10: %v granted in %v but belongs to %v", id, k, f.chans[i].Community)
							}
						}
					}
				}
			}
			check("initial")
			check("cached")
			for _, st := range steps {
				cc := &f.chans[st.chIdx]
				msg := authz.Message{CommunityID: cc.Community, ChannelID: cc.ID}
				switch st.kind {
				case 0:
					pair := [2]uint64{st.user, st.chIdx}
					active := !slices.Contains(f.members, pair)
					if active {
						f.members = append(f.members, pair)
					} else {
						f.members = slices.DeleteFunc(f.members, func(p [2]uint64) bool { return p == pair })
					}
					_ = db.SetMember(user(st.user), cc.ID, active)
					msg.Kind, msg.UserID = authz.KindMembership, user(st.user)
				case 1:
					cc.Open = !cc.Open
					msg.Kind = authz.KindVisibility
				case 2:
					cc.Listed = !cc.Listed
					msg.Kind = authz.KindVisibility
				case 3:
					cc.Deleted = true
					msg.Kind = authz.KindChannelDeleted
				}
				v := *cc
				_ = db.UpdateChannel(cc.ID, func(x *authztest.Channel) { *x = v })
				c.Invalidate(msg)
				check("after write")
			}
		})
		if res.Err != nil {
			rt.Fatalf("seed %d: %v", seed, res.Err)
		}
	})
}

// OC-10 explicitly: a user who is a member of another community's channel,
// and that channel being open and listed, is never granted it in this one.
func TestNeverGrantsAnotherCommunitysChannel(t *testing.T) {
	x, y := ch(1), ch(2)
	var got []authz.ID
	var crossMember, crossOpen bool
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		mustAdd(s, db, privateCh(x, k2), openCh(y, k2), openCh(ch(3), k1))
		mustMember(s, db, user(1), x)
		c := mustCache(s, db, accesschannels.Config{})
		_ = accessible(s, c, k2, user(1)) // warm both halves of k2
		got = accessible(s, c, k1, user(1))
		crossMember = granted(s, c, k1, user(1), x)
		crossOpen = granted(s, c, k1, user(1), y)
	})
	assert.Equal(t, []authz.ID{ch(3)}, got)
	assert.False(t, crossMember, "member channel of another community")
	assert.False(t, crossOpen, "open channel of another community")
}

package pods

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

// Churn is a randomized workload on one community: admins revoke and restore
// open channels and grant and remove memberships of private channels,
// readers ask random pods, pods restart. The roles keep every tracked read
// attributable to one claim:
//
//   - Non-member readers never hold a membership, and read the open-class
//     channels (made private, unlisted or deleted, and open or listed
//     again). Any grant comes from the open half (OC-2).
//   - Member readers read the private-class channels, which are never
//     open. Any OC grant comes from the member half (OC-7), and the same
//     keys are asked of the membership cache (MS-2, MS-10).
type Churn struct {
	Community         authz.ID
	OtherCommunity    authz.ID // holds channels no reader of Community may ever see (OC-10)
	NonMembers        []authz.ID
	Members           []authz.ID
	OpenChannels      []authz.ID
	PrivateChannels   []authz.ID
	OtherChannels     []authz.ID
	Admins            int
	AdminWrites       int           // per admin
	AdminPause        time.Duration // max pause between writes
	Readers           int
	Reads             int           // per reader
	ReaderPause       time.Duration // max pause between reads
	CancelProb        float64       // a read's context ends after a short random time
	RestartProb       float64       // per admin step: restart a random pod
	Deletes           bool          // revocations may delete (then the channel stays deleted)
	CrossReads        bool          // member readers also ask about OtherCommunity, where they hold memberships (OC-10)
	MembershipReadsMS bool          // readers also ask the membership cache
}

// DefaultChurn returns a small community: 3 non-member readers, 3 member
// readers, 6 open-class and 6 private-class channels.
func DefaultChurn() Churn {
	c := Churn{
		Community: authz.NewID('k', 1), OtherCommunity: authz.NewID('k', 2),
		Admins: 2, AdminWrites: 40, AdminPause: 3 * time.Second,
		Readers: 6, Reads: 120, ReaderPause: time.Second,
		CancelProb: 0.05, RestartProb: 0.02, Deletes: true, MembershipReadsMS: true, CrossReads: true,
	}
	for i := range 3 {
		c.NonMembers = append(c.NonMembers, authz.NewID('n', uint64(i+1)))
		c.Members = append(c.Members, authz.NewID('m', uint64(i+1)))
	}
	for i := range 6 {
		c.OpenChannels = append(c.OpenChannels, authz.NewID('o', uint64(i+1)))
		c.PrivateChannels = append(c.PrivateChannels, authz.NewID('p', uint64(i+1)))
	}
	c.OtherChannels = []authz.ID{authz.NewID('x', 1), authz.NewID('x', 2)}
	return c
}

// Tables returns the initial tables: open channels open and listed, private
// channels private with every member granted half of them.
func (c Churn) Tables() (authztest.Tables, error) {
	t := authztest.NewTables()
	for _, id := range c.OpenChannels {
		if err := t.AddChannel(authztest.Channel{ID: id, Community: c.Community, Open: true, Listed: true}); err != nil {
			return t, err
		}
	}
	for _, id := range c.PrivateChannels {
		if err := t.AddChannel(authztest.Channel{ID: id, Community: c.Community}); err != nil {
			return t, err
		}
	}
	for _, id := range c.OtherChannels {
		if err := t.AddChannel(authztest.Channel{ID: id, Community: c.OtherCommunity, Open: true, Listed: true}); err != nil {
			return t, err
		}
	}
	for mi, m := range c.Members {
		for pi, p := range c.PrivateChannels {
			if (mi+pi)%2 == 0 {
				if err := t.SetMember(m, p, true); err != nil {
					return t, err
				}
			}
		}
		// Members also belong to the other community's channels, so a cache
		// that forgets the community in its key would leak them (OC-10).
		for _, x := range c.OtherChannels {
			if err := t.SetMember(m, x, true); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// TrackAll declares every (reader, channel) key the workload reads.
func (c Churn) TrackAll(w *World) error {
	for _, r := range c.NonMembers {
		for _, ch := range c.OpenChannels {
			if err := w.Track(Key{OC, c.Community, r, ch}, NonMember); err != nil {
				return err
			}
		}
	}
	for _, m := range c.Members {
		for _, ch := range c.PrivateChannels {
			if err := w.Track(Key{OC, c.Community, m, ch}, Member); err != nil {
				return err
			}
			if c.MembershipReadsMS {
				if err := w.Track(Key{MS, c.Community, m, ch}, Membership); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func pick[T any](w *World, xs []T) T { return xs[w.S.Rand().IntN(len(xs))] }

// cancelled returns the context of one client request: with probability
// prob (a fault: sim.Keep may drop it) one that ends a random 0–20 ms from
// now, else ctx itself. The draws are the same whether the fault is kept.
func (w *World) cancelled(ctx context.Context, prob float64) (context.Context, context.CancelFunc) {
	s := w.S
	if s.Rand().Float64() < prob {
		d := time.Duration(s.Rand().Int64N(int64(20 * time.Millisecond)))
		if s.Keep(sim.KeepFault) {
			if s.Recording() {
				s.Injected("the next request's context ends after %v", d)
			}
			return s.WithTimeout(ctx, d)
		}
	}
	return ctx, func() {}
}

func (w *World) pause(ctx context.Context, max time.Duration) {
	if max > 0 {
		_ = w.S.Sleep(ctx, time.Duration(w.S.Rand().Int64N(int64(max))))
	}
}

// Run starts the admins and readers and waits for them. Errors of single
// operations (transient database errors, cancelled reads) are expected under
// faults and only counted; a run fails only through the checks after it.
func (c Churn) Run(ctx context.Context, w *World) (errs int) {
	s := w.S
	wg := s.NewWaitGroup("churn")
	count := func(err error) {
		if err != nil && !errors.Is(err, ErrSkipped) {
			errs++
		}
	}
	wg.Add(c.Admins + c.Readers)
	for a := range c.Admins {
		s.Go(fmt.Sprintf("admin%d", a), func() {
			defer wg.Done()
			for range c.AdminWrites {
				if !s.KeepsLeft(sim.KeepOperation) && !s.KeepsLeft(sim.KeepFault) {
					return // a shrink dropped every later write and restart
				}
				w.pause(ctx, c.AdminPause)
				if s.Rand().Float64() < c.RestartProb {
					_ = pick(w, w.Pods).Restart()
					continue
				}
				pod := pick(w, w.Pods)
				if s.Rand().IntN(2) == 0 {
					ch := pick(w, c.OpenChannels)
					changes := []Change{MakePrivate, Unlist, MakeOpen, List, MakeOpen, List}
					if c.Deletes && s.Rand().IntN(10) == 0 {
						changes = []Change{Delete}
					}
					count(w.Write(ctx, pod, -1-a, pick(w, changes), c.Community, authz.ID{}, ch))
				} else {
					ch := pick(w, c.PrivateChannels)
					change := GrantMember
					if s.Rand().IntN(2) == 0 {
						change = RemoveMember
					}
					count(w.Write(ctx, pod, -1-a, change, c.Community, pick(w, c.Members), ch))
				}
			}
		})
	}
	for r := range c.Readers {
		s.Go(fmt.Sprintf("reader%d", r), func() {
			defer wg.Done()
			for range c.Reads {
				if !s.KeepsLeft(sim.KeepOperation) {
					return // a shrink dropped every later read
				}
				w.pause(ctx, c.ReaderPause)
				rctx, cancel := w.cancelled(ctx, c.CancelProb)
				pod := pick(w, w.Pods)
				switch s.Rand().IntN(3) {
				case 0:
					_, err := w.Accessible(rctx, pod, r, c.Community, pick(w, c.NonMembers))
					count(err)
				case 1:
					community := c.Community
					if c.CrossReads && s.Rand().IntN(4) == 0 {
						community = c.OtherCommunity
					}
					_, err := w.Accessible(rctx, pod, r, community, pick(w, c.Members))
					count(err)
				default:
					if c.MembershipReadsMS {
						_, err := w.IsMember(rctx, pod, r, c.Community, pick(w, c.Members), pick(w, c.PrivateChannels))
						count(err)
					} else {
						_, err := w.Granted(rctx, pod, r, c.Community, pick(w, c.NonMembers), pick(w, c.OpenChannels))
						count(err)
					}
				}
				cancel()
			}
		})
	}
	_ = wg.Wait(ctx)
	return errs
}

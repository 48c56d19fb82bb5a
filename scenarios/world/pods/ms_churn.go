package pods

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/sim"
)

// MSChurn is a membership workload on one community, built for the
// membership snapshot cache's time claims (MS-2, MS-3, MS-10): admins grant
// and remove memberships of private channels through chosen pods, and one
// client per (pod, user) re-checks every channel of its user at short
// random pauses. A client therefore reads its user's snapshot through the
// snapshot's whole freshness window, so an answer served late in the window
// (past the bound, if expiry were counted wrongly) is observed, and a load
// that straddles a change is followed by reads of the changed key.
//
// A membership check's truth is the membership row of a channel not
// deleted (Tables.IsActiveMember): only the community admin
// (CommunityPause, off by default) opens, closes or deletes channels.
type MSChurn struct {
	Community authz.ID
	Users     []authz.ID
	Channels  []authz.ID

	// Admins write concurrently, each pausing up to AdminPause between
	// writes. GrantProb is the chance a write grants (else it removes).
	Admins     int
	AdminPause time.Duration
	GrantProb  float64
	// WritePods and ReadPods restrict which pods admins write through and
	// clients check on (nil: every pod). MS-10 writes on one pod and reads
	// on the others.
	WritePods, ReadPods []int

	// ClientsPerUser is the number of clients per (pod, user): with more
	// than one, a user's check can start while another client's load of
	// that user is in flight, so a second load can begin after an
	// invalidation while the first is still running (MS-3's fence).
	ClientsPerUser int
	// ClientPause is the longest pause between two rounds of a client.
	ClientPause time.Duration
	// CancelProb is the chance that a round's context ends after a short
	// random time (cancelled requests).
	CancelProb float64
	// SubscribeProb is the chance that a round is an explicit channel
	// subscription (World.Subscribe) instead of write checks (MS-12).
	SubscribeProb float64

	// CommunityPause, when positive, adds a community admin who, after a
	// pause of up to CommunityPause, announces accessible_all (every entry
	// of the community dropped, every user reloads at once) and, up to
	// ClientPause·2 later (while those loads run), changes a channel. It
	// deletes the next of the last Deletions channels once its turn has
	// come (the k-th at k/(Deletions+1) of the horizon or later), else
	// toggles a channel's visibility. These are the community-wide
	// invalidations (channel_deleted, accessible_all, visibility). A deleted
	// channel's members lose it at the commit, so a load that read before
	// the deletion holds a list that grants it (MS-3's fence).
	CommunityPause time.Duration
	Deletions      int

	// Horizon is how long admins and clients keep going; MaxRounds bounds
	// every task's loop whatever the pauses.
	Horizon   time.Duration
	MaxRounds int
}

// DefaultMSChurn returns 6 users and 5 private channels, 2 admins writing
// about twice a second in all, clients checking about every 150 ms, for
// 40 s of virtual time.
func DefaultMSChurn() MSChurn {
	c := MSChurn{
		Community: authz.NewID('k', 7),
		Admins:    2, AdminPause: time.Second, GrantProb: 0.5,
		ClientsPerUser: 2, ClientPause: 300 * time.Millisecond, CancelProb: 0.02,
		Horizon: 40 * time.Second, MaxRounds: 10_000,
	}
	for i := range 6 {
		c.Users = append(c.Users, authz.NewID('u', uint64(i+1)))
	}
	for i := range 5 {
		c.Channels = append(c.Channels, authz.NewID('p', uint64(i+1)))
	}
	return c
}

// Validate reports a workload that cannot run.
func (c MSChurn) Validate(pods int) error {
	switch {
	case c.Community.IsZero() || len(c.Users) == 0 || len(c.Channels) == 0:
		return fmt.Errorf("relay: MSChurn needs a community, users and channels")
	case c.ClientsPerUser < 1 || c.ClientsPerUser > 16:
		return fmt.Errorf("pods: MSChurn needs 1–16 clients per user, got %d", c.ClientsPerUser)
	case c.Admins < 0 || c.AdminPause <= 0 || c.ClientPause <= 0 || c.Horizon <= 0 || c.MaxRounds <= 0:
		return fmt.Errorf("relay: MSChurn needs positive AdminPause, ClientPause, Horizon and MaxRounds and Admins ≥ 0 (got %v, %v, %v, %d, %d)",
			c.AdminPause, c.ClientPause, c.Horizon, c.MaxRounds, c.Admins)
	case c.CommunityPause < 0 || c.Deletions < 0 || c.Deletions > len(c.Channels) || (c.Deletions > 0 && c.CommunityPause == 0):
		return fmt.Errorf("pods: MSChurn needs CommunityPause ≥ 0 and 0–%d Deletions, made by a community admin (CommunityPause > 0); got %v, %d", len(c.Channels), c.CommunityPause, c.Deletions)
	case c.GrantProb < 0 || c.GrantProb > 1 || c.CancelProb < 0 || c.CancelProb > 1 || c.SubscribeProb < 0 || c.SubscribeProb > 1:
		return fmt.Errorf("relay: MSChurn probabilities must be in [0, 1]")
	}
	for _, ps := range [][]int{c.WritePods, c.ReadPods} {
		for _, p := range ps {
			if p < 0 || p >= pods {
				return fmt.Errorf("relay: MSChurn names pod %d of %d", p, pods)
			}
		}
	}
	return nil
}

// Tables returns the initial tables: every channel private, user i a member
// of channel j when i+j is even.
func (c MSChurn) Tables() (authztest.Tables, error) {
	t := authztest.NewTables()
	for _, id := range c.Channels {
		if err := t.AddChannel(authztest.Channel{ID: id, Community: c.Community}); err != nil {
			return t, err
		}
	}
	for i, u := range c.Users {
		for j, ch := range c.Channels {
			if (i+j)%2 == 0 {
				if err := t.SetMember(u, ch, true); err != nil {
					return t, err
				}
			}
		}
	}
	return t, nil
}

// TrackAll declares every (user, channel) membership key, class Membership.
func (c MSChurn) TrackAll(w *World) error {
	for _, u := range c.Users {
		for _, ch := range c.Channels {
			if err := w.Track(Key{MS, c.Community, u, ch}, Membership); err != nil {
				return err
			}
		}
	}
	return nil
}

func podsOf(w *World, only []int) []*Pod {
	if only == nil {
		return w.Pods
	}
	out := make([]*Pod, 0, len(only))
	for _, i := range only {
		out = append(out, w.Pods[i])
	}
	return out
}

// Run starts the admins and clients and waits for them. Single operations
// may fail under faults (transient errors, cancelled rounds); they are
// counted, and a run fails only through the checks after it.
func (c MSChurn) Run(ctx context.Context, w *World) (errs int, err error) {
	if err := c.Validate(len(w.Pods)); err != nil {
		return 0, err
	}
	s := w.S
	end := s.Elapsed() + c.Horizon
	writePods, readPods := podsOf(w, c.WritePods), podsOf(w, c.ReadPods)
	wg := s.NewWaitGroup("ms-churn")
	count := func(err error) {
		if err != nil && !errors.Is(err, ErrSkipped) {
			errs++
		}
	}
	wg.Add(c.Admins + len(readPods)*len(c.Users)*c.ClientsPerUser)
	if c.CommunityPause > 0 {
		wg.Add(1)
		s.Go("ms-community-admin", func() {
			defer wg.Done()
			c.communityAdmin(ctx, w, writePods, end, count)
		})
	}
	for a := range c.Admins {
		s.Go(fmt.Sprintf("ms-admin%d", a), func() {
			defer wg.Done()
			for range c.MaxRounds {
				if !s.KeepsLeft(sim.KeepOperation) {
					_ = s.Sleep(ctx, end-s.Elapsed()) // a shrink dropped the rest: out to the horizon in one step
					return
				}
				w.pause(ctx, c.AdminPause)
				if s.Elapsed() >= end {
					return
				}
				change := RemoveMember
				if s.Rand().Float64() < c.GrantProb {
					change = GrantMember
				}
				count(w.Write(ctx, pick(w, writePods), -1-a, change, c.Community, pick(w, c.Users), pick(w, c.Channels)))
			}
		})
	}
	for pi, pod := range readPods {
		for ui, u := range c.Users {
			for ci := range c.ClientsPerUser {
				client := (pi*len(c.Users)+ui)*c.ClientsPerUser + ci
				s.Go(fmt.Sprintf("ms-client-%s-%s-%d", pod.Name, Short(u), ci), func() {
					defer wg.Done()
					for range c.MaxRounds {
						if !s.KeepsLeft(sim.KeepOperation) {
							_ = s.Sleep(ctx, end-s.Elapsed())
							return
						}
						w.pause(ctx, c.ClientPause)
						if s.Elapsed() >= end {
							return
						}
						rctx, cancel := w.cancelled(ctx, c.CancelProb)
						if c.SubscribeProb > 0 && s.Rand().Float64() < c.SubscribeProb {
							_, err := w.Subscribe(rctx, pod, client, c.Community, u, pick(w, c.Channels))
							count(err)
						} else {
							for _, ch := range c.Channels {
								_, err := w.IsMember(rctx, pod, client, c.Community, u, ch)
								count(err)
							}
						}
						cancel()
					}
				})
			}
		}
	}
	_ = wg.Wait(ctx)
	return errs, nil
}

// communityAdmin makes the community-wide changes (CommunityPause) until
// end.
func (c MSChurn) communityAdmin(ctx context.Context, w *World, writePods []*Pod, end time.Duration, count func(error)) {
	s := w.S
	start := s.Elapsed()
	client := -1 - c.Admins
	deleted := 0
	for range c.MaxRounds {
		if !s.KeepsLeft(sim.KeepOperation) {
			_ = s.Sleep(ctx, end-s.Elapsed())
			return
		}
		w.pause(ctx, c.CommunityPause)
		if s.Elapsed() >= end {
			return
		}
		count(w.Announce(ctx, pick(w, writePods), client, relay.AccessibleChanged(c.Community)))
		w.pause(ctx, 2*c.ClientPause)
		if s.Elapsed() >= end {
			return
		}
		turn := start + time.Duration(deleted+1)*c.Horizon/time.Duration(c.Deletions+1)
		if deleted < c.Deletions && s.Elapsed() >= turn {
			ch := c.Channels[len(c.Channels)-c.Deletions+deleted]
			deleted++
			count(w.Write(ctx, pick(w, writePods), client, Delete, c.Community, authz.ID{}, ch))
			continue
		}
		change := MakeOpen
		if s.Rand().IntN(2) == 0 {
			change = MakePrivate
		}
		count(w.Write(ctx, pick(w, writePods), client, change, c.Community, authz.ID{}, pick(w, c.Channels)))
	}
}

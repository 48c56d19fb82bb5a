package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

var nextID atomic.Uint64

// lastCommunity is the community of the latest OC race, which the next
// one asks its channel under (OC-10).
var lastCommunity atomic.Value

func newID(kind byte) authz.ID { return authz.NewID(kind, nextID.Add(1)) }

// revocation is one way a channel stops being open to non-members.
type revocation struct {
	name string
	kind authz.Kind
	do   func(context.Context, *flight.Writer, authz.ID) (flight.Commit, error)
}

var revocations = []revocation{
	{"private", authz.KindVisibility, func(ctx context.Context, w *flight.Writer, ch authz.ID) (flight.Commit, error) {
		return w.SetOpen(ctx, ch, false)
	}},
	{"unlisted", authz.KindVisibility, func(ctx context.Context, w *flight.Writer, ch authz.ID) (flight.Commit, error) {
		return w.SetListed(ctx, ch, false)
	}},
	{"deleted", authz.KindChannelDeleted, func(ctx context.Context, w *flight.Writer, ch authz.ID) (flight.Commit, error) {
		return w.Delete(ctx, ch)
	}},
}

// Probe spacing of a race: coarse until near the window's end, then fine,
// so the last grant lands within probeFine of it. The flight's bound
// comes from the claims table; these only place the probes.
const (
	probeCoarse = 50 * time.Millisecond
	probeFine   = 2 * time.Millisecond
	// slowRead is the latency a slow-read race adds to the reading relay's
	// database replies; the revocation commits slowCommitAfter into it.
	slowRead = 300 * time.Millisecond
)

// ocRace is one OC-2 race on its own community: the reader relay r primes
// the community's open set with a cold read, the revocation commits right
// after that read's snapshot and the writer relay w publishes the
// invalidation, which r loses (its bus is cut by the caller). New readers
// then probe r from inside the window to past its end. With slow, r's
// database replies are delayed by slowRead during the prime, so the
// revocation commits while the read is still in flight (after its
// snapshot, before its completion): the race an age counted from the
// fill's completion loses.
func (e *env) ocRace(ctx context.Context, h *history, rv revocation, r, w int, window time.Duration, slow bool) error {
	community, ch := newID('k'), newID('c')
	c, err := e.writer.CreateChannel(ctx, community, ch, true, true)
	if err != nil {
		return err
	}
	h.addCommit(c)
	// Warm the reader's member half of the priming user and its pool, then
	// drop only the open set (a visibility message about another channel),
	// so the prime's one query is the open-set read.
	u0 := newID('u')
	if _, ok := e.ask(ctx, h, r, flight.OpGranted, classNonMember, community, u0, ch); !ok {
		return fmt.Errorf("warm-up read failed")
	}
	if err := e.invalidate(ctx, r, authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: newID('c')}); err != nil {
		return err
	}
	if slow {
		prime, c, err := e.slowPrime(ctx, h, r, func() (read, bool) {
			return e.ask(ctx, h, r, flight.OpGranted, classNonMember, community, u0, ch)
		}, "%visibility = 'open'%", func() (flight.Commit, error) { return rv.do(ctx, e.writer, ch) })
		if err != nil {
			return err
		}
		e.changed(ctx, h, w, authz.Message{Kind: rv.kind, CommunityID: community, ChannelID: ch})
		if !prime.OK {
			h.addErr("slow race: prime denied (its snapshot came after the revocation)")
			return errInconclusive
		}
		h.addGap(c.At - prime.Invoke)
		e.probe(ctx, h, r, community, ch, prime.Invoke, c.At, window)
		return nil
	}
	prime, ok := e.ask(ctx, h, r, flight.OpGranted, classNonMember, community, u0, ch)
	if !ok || !prime.OK {
		return fmt.Errorf("prime of an open listed channel failed or denied")
	}
	// OC-10: the same channel asked under another community, one the
	// relay has never read and one whose sets it holds.
	e.ask(ctx, h, r, flight.OpGranted, classCross, newID('k'), u0, ch)
	if prev, ok := lastCommunity.Swap(&community).(*authz.ID); ok && prev != nil {
		e.ask(ctx, h, r, flight.OpGranted, classCross, *prev, u0, ch)
	}
	c, err = rv.do(ctx, e.writer, ch)
	if err != nil {
		return err
	}
	h.addCommit(c)
	h.addGap(c.At - prime.Invoke)
	e.changed(ctx, h, w, authz.Message{Kind: rv.kind, CommunityID: community, ChannelID: ch})
	e.probe(ctx, h, r, community, ch, prime.Invoke, c.At, window)
	return nil
}

// probe asks new readers on relay r for the OC-2 race (see probeUntil).
func (e *env) probe(ctx context.Context, h *history, r int, community, ch authz.ID, from, committed int64, window time.Duration) {
	e.probeUntil(from, committed, window, probeCoarse, probeFine, func() (read, bool) {
		return e.ask(ctx, h, r, flight.OpGranted, classNonMember, community, newID('u'), ch)
	}, func(p read) bool { return !p.OK })
}

// probeUntil asks, coarsely until shortly before the window's end counted
// from the racing read's invocation (from), then finely, until two answers
// in a row have flipped (flipped) past that end, or until the window and
// half of it have passed since the change committed: a cache that serves
// past the window is probed there.
func (e *env) probeUntil(from, committed int64, window, coarse, fine time.Duration, ask func() (read, bool), flipped func(read) bool) {
	start := time.Unix(0, from)
	end := time.Unix(0, committed).Add(window + window/2)
	fineFrom := start.Add(window - 2*coarse)
	n := 0
	for i := 0; i < 100_000 && time.Now().Before(end); i++ {
		p, ok := ask()
		switch {
		case ok && flipped(p) && time.Unix(0, p.Invoke).After(start.Add(window)):
			if n++; n == 2 {
				return
			}
		case ok && !flipped(p):
			n = 0
		}
		step := coarse
		if time.Now().After(fineFrom) {
			step = fine
		}
		time.Sleep(step)
	}
}

// waitServerDone waits (polling pg_stat_activity, at most limit) until a
// backend has finished a statement matching pattern that started after
// since: its snapshot is then taken, whatever its answer's delay in the
// proxy.
func (e *env) waitServerDone(ctx context.Context, since time.Time, pattern string, limit time.Duration) error {
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var n int
		err := e.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE state = 'idle' AND query LIKE $2 AND query_start >= $1`, since, pattern).Scan(&n)
		if err != nil {
			return fmt.Errorf("flight: pg_stat_activity: %w", err)
		}
		if n > 0 {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil // not seen: the race goes on; a prime that then sees the revocation is counted, not judged
}

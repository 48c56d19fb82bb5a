package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// Probe spacing of the 10 s races.
const (
	longCoarse = 250 * time.Millisecond
	longFine   = 5 * time.Millisecond
)

// memberRace is one 10 s race on its own community and private channel,
// with the reader relay r's bus cut by the caller:
//
//   - OC-7 (op granted): a member's half is filled on r, the membership is
//     removed right after, and the same reader probes r until denied;
//   - MS-2 (op member, remove): a member's snapshot is loaded on r, the
//     membership is removed right after, probed until denied;
//   - MS-10 (op member, grant): a non-member's snapshot is loaded on r, a
//     membership is granted right after, probed until granted.
//
// The writer relay w publishes each invalidation, which r loses. With
// slow, r's database replies are delayed by slowRead during the prime and
// the change commits once the server has answered the load (its snapshot
// taken) while the answer is held in the proxy: the race an expiry
// counted from the load's completion loses.
func (e *env) memberRace(ctx context.Context, h *history, op string, grant bool, r, w int, window time.Duration, slow bool) error {
	community, ch, other, user := newID('k'), newID('p'), newID('p'), newID('m')
	for _, c := range []authz.ID{ch, other} {
		cm, err := e.writer.CreateChannel(ctx, community, c, false, true)
		if err != nil {
			return err
		}
		h.addCommit(cm)
	}
	// The user is a member of another channel, so its snapshot or member
	// half is not empty; of ch unless the race grants it.
	for _, m := range []struct {
		ch     authz.ID
		active bool
	}{{other, true}, {ch, !grant}} {
		if !m.active {
			continue
		}
		cm, err := e.writer.SetMember(ctx, community, user, m.ch, true)
		if err != nil {
			return err
		}
		h.addCommit(cm)
	}
	class := classMember
	if op == flight.OpMember {
		class = classMS
	}
	var prime read
	var c flight.Commit
	if slow {
		var err error
		if prime, c, err = e.slowPrime(ctx, h, r, func() (read, bool) { return e.ask(ctx, h, r, op, class, community, user, ch) },
			slowLoadPattern(op), func() (flight.Commit, error) { return e.writer.SetMember(ctx, community, user, ch, grant) }); err != nil {
			return err
		}
		if prime.OK == grant {
			h.addErr("slow race: prime saw the change (its snapshot came after it)")
			return errInconclusive
		}
	} else {
		var ok bool
		prime, ok = e.ask(ctx, h, r, op, class, community, user, ch)
		if !ok || prime.OK == grant {
			return fmt.Errorf("%s race: prime failed or answered %v", op, prime.OK)
		}
		var err error
		if c, err = e.writer.SetMember(ctx, community, user, ch, grant); err != nil {
			return err
		}
		h.addCommit(c)
	}
	h.addGap(c.At - prime.Invoke)
	e.changed(ctx, h, w, authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: ch})
	e.probeUntil(prime.Invoke, c.At, window, longCoarse, longFine, func() (read, bool) {
		return e.ask(ctx, h, r, op, class, community, user, ch)
	}, func(p read) bool { return p.OK == grant })
	return nil
}

// crossAsk asks relay r whether user may see channel ch of community
// naming another community: always a denial (OC-10).
func (e *env) crossAsk(ctx context.Context, h *history, r int, wrongCommunity, user, ch authz.ID) {
	e.ask(ctx, h, r, flight.OpGranted, classCross, wrongCommunity, user, ch)
}

// slowLoadPattern is a LIKE pattern of the statement a cold prime of op
// runs (pgstore.Query's texts): the membership cache's bounded load, or
// the member half.
func slowLoadPattern(op string) string {
	if op == flight.OpMember {
		return "%LIMIT $3%"
	}
	return "%m.removed_at IS NULL%"
}

// slowPrime runs ask on relay r with r's database replies delayed by
// slowRead, commits the change once the server has answered a statement
// matching pattern started after the ask (its snapshot is taken), and
// returns the prime's answer and the commit. The delay is removed before
// it returns.
func (e *env) slowPrime(ctx context.Context, h *history, r int, ask func() (read, bool), pattern string, change func() (flight.Commit, error)) (read, flight.Commit, error) {
	proxy := e.relays[r].pgProxy
	toxic := proxy + "-slow"
	if err := e.toxi.AddToxic(ctx, proxy, flight.Toxic{Name: toxic, Type: "latency", Stream: "downstream", Toxicity: 1,
		Attributes: map[string]int{"latency": int(slowRead / time.Millisecond)}}); err != nil {
		return read{}, flight.Commit{}, err
	}
	var prime read
	var primed bool
	var wg sync.WaitGroup
	wg.Add(1)
	sent := time.Now()
	go func() { defer wg.Done(); prime, primed = ask() }()
	err := e.waitServerDone(ctx, sent, pattern, 3*slowRead)
	var c flight.Commit
	if err == nil {
		c, err = change()
	}
	wg.Wait()
	if rerr := e.toxi.RemoveToxic(ctx, proxy, toxic); err == nil {
		err = rerr
	}
	if err != nil {
		return read{}, flight.Commit{}, err
	}
	h.addCommit(c)
	if !primed {
		return read{}, flight.Commit{}, fmt.Errorf("slow prime failed")
	}
	return prime, c, nil
}

// errInconclusive: a slow race whose prime saw the change proves nothing;
// the caller flies it again on fresh IDs (retried).
var errInconclusive = errors.New("inconclusive race")

// slowAttempts bounds how often a slow race is flown again.
const slowAttempts = 3

// retried runs race until it is conclusive, at most slowAttempts times;
// an inconclusive last attempt is not an error (it is counted).
func retried(race func() error) error {
	for range slowAttempts {
		if err := race(); !errors.Is(err, errInconclusive) {
			return err
		}
	}
	return nil
}

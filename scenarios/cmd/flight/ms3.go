package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// The MS-3 phase's size: keys (users × channels), readers and its length.
const (
	ms3Users    = 3
	ms3Channels = 2
	ms3Readers  = 4
	ms3Length   = 3 * time.Second
	ms3Timeout  = 30 * time.Second
)

// linVerdict is MS-3 judged by porcupine on one relay's history.
type linVerdict struct {
	Ops     int
	Writes  int
	Verdict string
	Keys    []string
	Widen   time.Duration // each operation's interval widened by U on both sides
}

// ms3 flies MS-3's premise: one relay, reliable invalidation (its own
// write path), readers checking memberships while a writer grants and
// removes them (commit, then Changed on the same relay). Every operation's
// interval is widened by the clock uncertainty u on both sides, and the
// history goes to porcupine (checks.Linearizable).
func (e *env) ms3(ctx context.Context, rng *rand.Rand, u time.Duration) (linVerdict, error) {
	community := newID('k')
	var users, chans []authz.ID
	init := map[string]bool{}
	for range ms3Channels {
		ch := newID('p')
		if _, err := e.writer.CreateChannel(ctx, community, ch, false, true); err != nil {
			return linVerdict{}, err
		}
		chans = append(chans, ch)
	}
	for range ms3Users {
		users = append(users, newID('m'))
	}
	for _, us := range users {
		for _, ch := range chans {
			init[key(flight.OpMember, community, us, ch)] = false
		}
	}
	var mu sync.Mutex
	var ops []checks.LinOp
	add := func(op checks.LinOp) {
		op.Call -= int64(u)
		op.Return += int64(u)
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
	}
	end := time.Now().Add(ms3Length)
	var wg sync.WaitGroup
	var failed sync.Map
	for i := range ms3Readers {
		seed := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for n := 0; n < 100_000 && time.Now().Before(end); n++ {
				us, ch := users[r.IntN(len(users))], chans[r.IntN(len(chans))]
				resp, err := e.relays[0].Call(ctx, flight.Request{Op: flight.OpMember, Community: community, User: us, Channel: ch})
				if err != nil || resp.Err != "" {
					failed.Store("read", true)
					continue
				}
				add(checks.LinOp{Key: key(flight.OpMember, community, us, ch), Value: resp.OK, Call: resp.Invoke, Return: resp.Return, Client: 1 + i})
			}
		}()
	}
	writes := 0
	state := map[string]bool{}
	for n := 0; n < 10_000 && time.Now().Before(end); n++ {
		us, ch := users[rng.IntN(len(users))], chans[rng.IntN(len(chans))]
		k := key(flight.OpMember, community, us, ch)
		v := !state[k]
		call := time.Now().UnixNano()
		if _, err := e.writer.SetMember(ctx, community, us, ch, v); err != nil {
			wg.Wait()
			return linVerdict{}, err
		}
		resp, err := e.relays[0].Call(ctx, flight.Request{Op: flight.OpChanged, Msg: &authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: us, ChannelID: ch}})
		if err != nil || resp.Err != "" {
			wg.Wait()
			return linVerdict{}, fmt.Errorf("ms3: changed: %v %s", err, resp.Err)
		}
		add(checks.LinOp{Key: k, Write: true, Value: v, Call: call, Return: time.Now().UnixNano()})
		state[k] = v
		writes++
		time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
	}
	wg.Wait()
	if _, bad := failed.Load("read"); bad {
		return linVerdict{}, fmt.Errorf("ms3: a read failed on a relay without faults")
	}
	res := checks.Linearizable(ops, init, ms3Timeout)
	if res.Err != nil {
		return linVerdict{}, res.Err
	}
	return linVerdict{Ops: res.Ops, Writes: writes, Verdict: fmt.Sprint(res.Verdict), Keys: res.Keys, Widen: u}, nil
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// The churn's size: its world, its traffic and its fault schedule are
// bounded and drawn from the flight's seed.
const (
	churnCommunities = 2
	churnChannels    = 3 // per community
	churnUsers       = 4
	churnReaders     = 3
	churnMaxReads    = 20_000 // per reader
	churnMaxWrites   = 2_000
	churnCrossProb   = 0.05 // a read naming another community's channel (OC-10)
	churnBurst       = 16   // cold reads at once when a relay's pool is starved
)

// classChurnOC marks a churn OC read until the judge knows, from the
// commit log, whether its user was ever a member of its channel.
const classChurnOC = "churn-oc"

// fault is one entry of the seeded fault schedule.
type fault struct {
	At, For time.Duration // offset from the churn's start, length
	Kind    string
	Relay   int
	Latency int // ms, for latency toxics
	Jitter  int // ms
}

// Fault kinds: a cut bus (subscription reset, messages lost while it
// reconnects), delayed delivery, database latency and jitter, connections
// reset in the middle of a read, and a starved pool.
var faultKinds = []string{"bus-cut", "bus-delay", "db-latency", "db-reset", "pool-starved"}

// schedule draws n faults over length, the kinds taken in turn (a seeded
// order), each at a random instant on a random relay, never two at once on
// one relay (a draw that would overlap is dropped, after a few tries).
func schedule(rng *rand.Rand, relays int, length time.Duration, n int) []fault {
	var out []fault
	busy := make([][]fault, relays)
	order := rng.Perm(len(faultKinds))
	for i := 0; i < n; i++ {
		f := fault{Kind: faultKinds[order[i%len(order)]]}
		f.For = 300*time.Millisecond + time.Duration(rng.Int64N(int64(1500*time.Millisecond)))
		if f.For >= length {
			continue
		}
		placed := false
		for try := 0; try < 4 && !placed; try++ {
			f.Relay = rng.IntN(relays)
			f.At = time.Duration(rng.Int64N(int64(length - f.For)))
			placed = true
			for _, g := range busy[f.Relay] {
				if f.At < g.At+g.For+100*time.Millisecond && g.At < f.At+f.For+100*time.Millisecond {
					placed = false
				}
			}
		}
		if !placed {
			continue
		}
		switch f.Kind {
		case "bus-delay":
			f.Latency = 200 + rng.IntN(1800)
		case "db-latency":
			f.Latency, f.Jitter = 10+rng.IntN(70), rng.IntN(40)
		case "db-reset":
			f.Latency = 5 + rng.IntN(40) // reset_peer's timeout
		case "pool-starved":
			f.Latency = 100 + rng.IntN(150)
		}
		busy[f.Relay] = append(busy[f.Relay], f)
		out = append(out, f)
	}
	return out
}

// apply starts fault f (named by its index) and returns what ends it.
func (e *env) apply(ctx context.Context, h *history, idx int, f fault, starve func(int)) (func() error, error) {
	r := e.relays[f.Relay]
	name := fmt.Sprintf("%s-f%d", f.Kind, idx)
	toxic := func(proxy string, x flight.Toxic) (func() error, error) {
		x.Name, x.Toxicity = name, 1
		if x.Stream == "" {
			x.Stream = "downstream"
		}
		if err := e.toxi.AddToxic(ctx, proxy, x); err != nil {
			return nil, err
		}
		return func() error { return e.toxi.RemoveToxic(ctx, proxy, name) }, nil
	}
	h.addFault(f.Kind)
	switch f.Kind {
	case "bus-cut":
		if err := e.cutBus(ctx, f.Relay); err != nil {
			return nil, err
		}
		return func() error { return e.restoreBus(ctx, f.Relay) }, nil
	case "bus-delay":
		return toxic(r.redisProxy, flight.Toxic{Type: "latency", Attributes: map[string]int{"latency": f.Latency}})
	case "db-latency":
		return toxic(r.pgProxy, flight.Toxic{Type: "latency", Attributes: map[string]int{"latency": f.Latency, "jitter": f.Jitter}})
	case "db-reset":
		return toxic(r.pgProxy, flight.Toxic{Type: "reset_peer", Attributes: map[string]int{"timeout": f.Latency}})
	case "pool-starved":
		end, err := toxic(r.pgProxy, flight.Toxic{Type: "latency", Attributes: map[string]int{"latency": f.Latency}})
		if err == nil {
			starve(f.Relay)
		}
		return end, err
	}
	return nil, fmt.Errorf("flight: unknown fault %q", f.Kind)
}

// churnWorld is the churn's communities, channels and users.
type churnWorld struct {
	communities []authz.ID
	channels    map[authz.ID][]authz.ID // by community
	users       []authz.ID
}

// churn flies the seeded workload for length: readers on random relays
// asking both caches, a writer committing the seeds' writes and running
// the write path on a random relay, and the fault schedule.
func (e *env) churn(ctx context.Context, h *history, rng *rand.Rand, length time.Duration) error {
	cw := churnWorld{channels: map[authz.ID][]authz.ID{}}
	for range churnUsers {
		cw.users = append(cw.users, newID('u'))
	}
	for range churnCommunities {
		k := newID('k')
		cw.communities = append(cw.communities, k)
		for range churnChannels {
			ch := newID('c')
			c, err := e.writer.CreateChannel(ctx, k, ch, rng.IntN(2) == 0, rng.IntN(4) != 0)
			if err != nil {
				return err
			}
			h.addCommit(c)
			cw.channels[k] = append(cw.channels[k], ch)
			for _, u := range cw.users {
				if rng.IntN(3) == 0 {
					c, err := e.writer.SetMember(ctx, k, u, ch, true)
					if err != nil {
						return err
					}
					h.addCommit(c)
				}
			}
		}
	}
	start := time.Now()
	end := start.Add(length)
	var wg sync.WaitGroup
	read := func(r *rand.Rand, relay int) {
		k := cw.communities[r.IntN(len(cw.communities))]
		ch := cw.channels[k][r.IntN(churnChannels)]
		u := cw.users[r.IntN(len(cw.users))]
		op, class := flight.OpGranted, classChurnOC
		switch {
		case r.Float64() < churnCrossProb:
			other := cw.communities[(indexOf(cw.communities, k)+1)%len(cw.communities)]
			e.ask(ctx, h, relay, op, classCross, other, u, ch)
			return
		case r.IntN(3) == 0:
			op, class = flight.OpMember, classMS
		}
		e.ask(ctx, h, relay, op, class, k, u, ch)
	}
	for i := range churnReaders {
		seed := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for n := 0; n < churnMaxReads && time.Now().Before(end); n++ {
				read(r, r.IntN(len(e.relays)))
				time.Sleep(time.Duration(2+r.IntN(15)) * time.Millisecond)
			}
		}()
	}
	starve := func(relay int) {
		for j := range churnBurst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Cold member halves: new readers, each its own read.
				k := cw.communities[j%len(cw.communities)]
				e.ask(ctx, h, relay, flight.OpGranted, classNonMember, k, newID('u'), cw.channels[k][0])
			}()
		}
	}
	faults := schedule(rand.New(rand.NewPCG(rng.Uint64(), 1)), len(e.relays), length, 2*int(length/time.Second)+len(faultKinds))
	var ferr error
	var fmu sync.Mutex
	for i, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(f.At)))
			stop, err := e.apply(ctx, h, i, f, starve)
			if err == nil {
				time.Sleep(f.For)
				err = stop()
			}
			if err != nil {
				fmu.Lock()
				ferr = fmt.Errorf("fault %d (%s on relay%d): %w", i, f.Kind, f.Relay, err)
				fmu.Unlock()
			}
		}()
	}
	for n := 0; n < churnMaxWrites && time.Now().Before(end); n++ {
		if err := e.churnWrite(ctx, h, rng, cw); err != nil {
			wg.Wait()
			return err
		}
		time.Sleep(time.Duration(40+rng.IntN(110)) * time.Millisecond)
	}
	wg.Wait()
	return ferr
}

// churnWrite commits one of the seeds' writes and runs the write path on
// a random relay.
func (e *env) churnWrite(ctx context.Context, h *history, rng *rand.Rand, cw churnWorld) error {
	k := cw.communities[rng.IntN(len(cw.communities))]
	ch := cw.channels[k][rng.IntN(churnChannels)]
	var c flight.Commit
	var err error
	m := authz.Message{Kind: authz.KindVisibility, CommunityID: k, ChannelID: ch}
	switch x := rng.IntN(20); {
	case x < 6:
		c, err = e.writer.SetOpen(ctx, ch, rng.IntN(2) == 0)
	case x < 10:
		c, err = e.writer.SetListed(ctx, ch, rng.IntN(2) == 0)
	case x == 10 && ch != cw.channels[k][0]: // the first channel of each community stays
		c, err = e.writer.Delete(ctx, ch)
		m.Kind = authz.KindChannelDeleted
	default:
		u := cw.users[rng.IntN(len(cw.users))]
		c, err = e.writer.SetMember(ctx, k, u, ch, rng.IntN(2) == 0)
		m = authz.Message{Kind: authz.KindMembership, CommunityID: k, UserID: u, ChannelID: ch}
	}
	if err != nil {
		return err
	}
	h.addCommit(c)
	e.changed(ctx, h, rng.IntN(len(e.relays)), m)
	return nil
}

func indexOf(ids []authz.ID, id authz.ID) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// classifyChurn gives each churn OC read its claim's class: a user ever a
// member of the channel (a membership commit in the log) reads as a
// member (OC-7), any other as a non-member (OC-2).
func classifyChurn(reads []read, log []flight.Commit) {
	type mk struct{ u, ch authz.ID }
	member := map[mk]bool{}
	for _, c := range log {
		if !c.User.IsZero() {
			member[mk{c.User, c.Channel}] = true
		}
	}
	for i := range reads {
		if reads[i].Class != classChurnOC {
			continue
		}
		if member[mk{reads[i].User, reads[i].Channel}] {
			reads[i].Class = classMember
		} else {
			reads[i].Class = classNonMember
		}
	}
}

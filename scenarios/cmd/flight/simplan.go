package main

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
)

// simPlan is the simulated flight's world and draws, taken from the
// flight's seed in the flight's order, so the churn's world, reader seeds,
// fault schedule and writes are the flight's.
type simPlan struct {
	tables        authztest.Tables
	calmK, calmCh authz.ID
	cw            churnWorld
	readerSeeds   []uint64
	faults        []fault
	rng           *rand.Rand // the writes' draws, after the rest
	ids           uint64
}

func (p *simPlan) id(kind byte) authz.ID { p.ids++; return authz.NewID(kind, p.ids) }
func (p *simPlan) user() authz.ID        { return p.id('u') }

// planSim makes the draws Run makes before and during the churn: the race
// rounds' (which relay, which writer, the revocations' order), then the
// churn's world, readers and schedule.
func planSim(o Options) *simPlan {
	rng := rand.New(rand.NewPCG(o.Seed, 0x666c69676874))
	for range o.Rounds {
		rng.IntN(o.Relays)
		rng.IntN(o.Relays - 1)
		slices_shuffled(rng, revocations)
	}
	for range o.Long {
		rng.IntN(o.Relays)
		rng.IntN(o.Relays - 1)
	}
	p := &simPlan{tables: authztest.NewTables(), cw: churnWorld{channels: map[authz.ID][]authz.ID{}}, rng: rng}
	p.calmK, p.calmCh = p.id('k'), p.id('c')
	_ = p.tables.AddChannel(authztest.Channel{ID: p.calmCh, Community: p.calmK, Open: true, Listed: true})
	if o.Churn == 0 {
		return p
	}
	for range churnUsers {
		p.cw.users = append(p.cw.users, p.user())
	}
	for range churnCommunities {
		k := p.id('k')
		p.cw.communities = append(p.cw.communities, k)
		for range churnChannels {
			ch := p.id('c')
			_ = p.tables.AddChannel(authztest.Channel{ID: ch, Community: k, Open: rng.IntN(2) == 0, Listed: rng.IntN(4) != 0})
			p.cw.channels[k] = append(p.cw.channels[k], ch)
			for _, u := range p.cw.users {
				if rng.IntN(3) == 0 {
					_ = p.tables.SetMember(u, ch, true)
				}
			}
		}
	}
	for range churnReaders {
		p.readerSeeds = append(p.readerSeeds, rng.Uint64())
	}
	p.faults = schedule(rand.New(rand.NewPCG(rng.Uint64(), 1)), o.Relays, o.Churn, 2*int(o.Churn/time.Second)+len(faultKinds))
	return p
}

// churn flies the flight's churn in the simulator for length: the readers,
// the writer and the fault schedule, as env.churn does on the real servers.
func (p *simPlan) churn(s *sim.Sim, w *pods.World, length time.Duration, active []*fault, applied map[string]int) {
	ctx := context.Background()
	end := s.Elapsed() + length
	cw := p.cw
	wg := s.NewWaitGroup("flight sim churn")
	read := func(r *rand.Rand, pod *pods.Pod) {
		k := cw.communities[r.IntN(len(cw.communities))]
		ch := cw.channels[k][r.IntN(churnChannels)]
		u := cw.users[r.IntN(len(cw.users))]
		switch {
		case r.Float64() < churnCrossProb:
			other := cw.communities[(indexOf(cw.communities, k)+1)%len(cw.communities)]
			_, _ = w.Granted(ctx, pod, 0, other, u, ch)
		case r.IntN(3) == 0:
			_, _ = w.IsMember(ctx, pod, 0, k, u, ch)
		default:
			_, _ = w.Granted(ctx, pod, 0, k, u, ch)
		}
	}
	for i, seed := range p.readerSeeds {
		wg.Add(1)
		s.Go("flight sim reader", func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for n := 0; n < churnMaxReads && s.Elapsed() < end; n++ {
				read(r, w.Pods[r.IntN(len(w.Pods))])
				_ = s.Sleep(ctx, time.Duration(2+r.IntN(15))*time.Millisecond)
			}
		})
	}
	start := s.Elapsed()
	for _, f := range p.faults {
		applied[f.Kind]++
		if f.Kind == "bus-cut" || f.Kind == "bus-delay" { // a partition or a slowdown of the pod's subscription, set at NewWorld
			continue
		}
		wg.Add(1)
		s.Go("flight sim fault", func() {
			defer wg.Done()
			_ = s.Sleep(ctx, start+f.At-s.Elapsed())
			active[f.Relay] = &f
			if f.Kind == "pool-starved" {
				for j := range churnBurst {
					k := cw.communities[j%len(cw.communities)]
					wg.Add(1)
					s.Go("flight sim burst", func() {
						defer wg.Done()
						_, _ = w.Granted(ctx, w.Pods[f.Relay], 0, k, p.user(), cw.channels[k][0])
					})
				}
			}
			_ = s.Sleep(ctx, f.For)
			active[f.Relay] = nil
		})
	}
	for n := 0; n < churnMaxWrites && s.Elapsed() < end; n++ {
		p.write(ctx, w)
		_ = s.Sleep(ctx, time.Duration(40+p.rng.IntN(110))*time.Millisecond)
	}
	_ = wg.Wait(ctx)
}

// write is churnWrite's draws, committed through a pod's write path.
func (p *simPlan) write(ctx context.Context, w *pods.World) {
	rng, cw := p.rng, p.cw
	k := cw.communities[rng.IntN(len(cw.communities))]
	ch := cw.channels[k][rng.IntN(churnChannels)]
	var change pods.Change
	var u authz.ID
	switch x := rng.IntN(20); {
	case x < 6:
		change = map[bool]pods.Change{true: pods.MakeOpen, false: pods.MakePrivate}[rng.IntN(2) == 0]
	case x < 10:
		change = map[bool]pods.Change{true: pods.List, false: pods.Unlist}[rng.IntN(2) == 0]
	case x == 10 && ch != cw.channels[k][0]:
		change = pods.Delete
	default:
		u = cw.users[rng.IntN(len(cw.users))]
		change = map[bool]pods.Change{true: pods.GrantMember, false: pods.RemoveMember}[rng.IntN(2) == 0]
	}
	_ = w.Write(ctx, w.Pods[rng.IntN(len(w.Pods))], 0, change, k, u, ch)
}

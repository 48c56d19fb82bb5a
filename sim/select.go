package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// streamSelect is the PRNG stream a select draws from when several cases
// are ready. It is apart from the schedule's stream, so that a replayed
// schedule (which draws nothing) makes the same choices as the run it
// replays.
const streamSelect = 0x5e1ec7

// Select implements rt.Runtime. It is one scheduling point on everything (it
// may touch several channels and contexts), then it performs a ready case, or
// with block false returns -1, or queues the task on every case and blocks
// until one goes on.
func (s *Sim) Select(cases []rt.Case, block bool) (int, any, bool) {
	s.yieldOn(objAll)
	t := s.cur()
	ctxs := make([]*simCtx, len(cases))
	var ready []int
	for i, c := range cases {
		switch c.Dir {
		case rt.SendDir, rt.RecvDir:
			sc := s.chanOf(c.Chan)
			if sc != nil && ((c.Dir == rt.SendDir && sc.canSend()) || (c.Dir == rt.RecvDir && sc.canRecv())) {
				ready = append(ready, i)
			}
		case rt.DoneDir:
			if c.Ctx == nil {
				continue
			}
			ctxs[i] = s.simContext(c.Ctx, "select on Done")
			if c.Ctx.Err() != nil {
				ready = append(ready, i)
			}
		}
	}
	if len(ready) > 0 {
		i := ready[0]
		if len(ready) > 1 {
			i = ready[s.selectRand().IntN(len(ready))]
		}
		return s.doCase(cases, i)
	}
	if !block {
		return -1, nil, false
	}
	return s.waitCases(t, cases, ctxs)
}

// selectRand is the stream of select choices, made on first use.
func (s *Sim) selectRand() *rand.Rand {
	if s.selRand == nil {
		s.selRand = rand.New(rand.NewPCG(s.cfg.Seed, streamSelect))
	}
	return s.selRand
}

func (s *Sim) chanOf(c rt.AnyChan) *simChan {
	if c == nil {
		return nil
	}
	sc, ok := c.(*simChan)
	if !ok || sc.s != s {
		panic(fmt.Sprintf("sim: select on a channel (%T) not made by this Sim", c))
	}
	return sc
}

// doCase performs ready case i.
func (s *Sim) doCase(cases []rt.Case, i int) (int, any, bool) {
	c := cases[i]
	switch c.Dir {
	case rt.SendDir:
		s.chanOf(c.Chan).send(c.Value)
		return i, nil, false
	case rt.RecvDir:
		v, ok := s.chanOf(c.Chan).recv()
		return i, v, ok
	}
	return i, nil, false
}

// waitCases queues t on every case and blocks until a channel case fires or
// a context of a Done case ends; then it leaves every queue.
func (s *Sim) waitCases(t *task, cases []rt.Case, ctxs []*simCtx) (int, any, bool) {
	w := &selWait{t: t}
	var names []string
	for i, c := range cases {
		sc := s.chanOf(c.Chan)
		switch {
		case sc != nil && c.Dir == rt.SendDir:
			sc.sendq = append(sc.sendq, &chanWaiter{w: w, idx: i, val: c.Value})
			names = append(names, sc.name+" <-")
		case sc != nil && c.Dir == rt.RecvDir:
			sc.recvq = append(sc.recvq, &chanWaiter{w: w, idx: i})
			names = append(names, "<- "+sc.name)
		case ctxs[i] != nil:
			ctxs[i].watch(t)
			names = append(names, "<- ctx.Done()")
		}
	}
	op, obj := "select", strings.Join(names, ", ")
	if len(names) == 0 {
		op, obj = "select (no cases)", ""
	}
	chosen := -1
	for !w.fired && chosen < 0 {
		s.block(op, obj)
		if w.fired {
			break
		}
		for i, c := range cases {
			if c.Dir == rt.DoneDir && ctxs[i] != nil && c.Ctx.Err() != nil {
				chosen = i
				break
			}
		}
	}
	w.fired = true // no channel may complete a case of this select any more
	for i, c := range cases {
		if sc := s.chanOf(c.Chan); sc != nil {
			drop := func(x *chanWaiter) bool { return x.w == w }
			sc.sendq = slices.DeleteFunc(sc.sendq, drop)
			sc.recvq = slices.DeleteFunc(sc.recvq, drop)
		} else if ctxs[i] != nil {
			ctxs[i].unwatch(t)
		}
	}
	if chosen >= 0 {
		return chosen, nil, false
	}
	if w.closedErr {
		panic(fmt.Sprintf("send on closed channel (%s)", s.chanOf(cases[w.idx].Chan).name))
	}
	if cases[w.idx].Dir == rt.RecvDir && w.ok {
		s.chanOf(cases[w.idx].Chan).traceRecv()
	}
	return w.idx, w.val, w.ok
}

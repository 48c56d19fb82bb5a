package netthreads

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// work is one worker task: Ops random operations on the thread's
// connections, each at an instant the plan allows.
func (th *Thread) work(ctx context.Context) {
	w := th.w
	rnd := w.s.Rand()
	for range w.cfg.Ops {
		if ctx.Err() != nil || !w.s.KeepsLeft(sim.KeepOperation) {
			return // cancelled, or a shrink dropped every later operation
		}
		_ = w.s.Sleep(ctx, time.Duration(rnd.Int64N(int64(w.cfg.OpGap))))
		w.sleepUntil(ctx, w.cfg.Plan.NextOp(w.now()))
		th.randomOp(ctx)
	}
}

// randomOp does one operation: open (sometimes a burst with one deadline),
// activity, set or disarm a timeout (shorter or longer than the current
// one), close.
func (th *Thread) randomOp(ctx context.Context) {
	w := th.w
	rnd := w.s.Rand()
	th.flush(w.now()) // the decisions below read the reference's state
	r := rnd.IntN(100)
	if r < 10 || len(th.open) == 0 {
		th.openBurst()
		return
	}
	// Counted from the newest: a shrink that drops older opens keeps the
	// same connection picked (its place from the end does not move), and
	// its smallest draw picks the newest, so a counterexample needs no
	// opens before the one it acts on.
	i := th.open[len(th.open)-1-rnd.IntN(len(th.open))]
	switch {
	case r < 50:
		if rnd.IntN(3) == 0 {
			if j, ok := th.dueThisTick(); ok {
				i = j
			}
		}
		th.activityOp(ctx, i)
	case r < 68:
		if rnd.IntN(10) == 0 {
			th.setInactivity(i, 0)
			return
		}
		th.setInactivity(i, th.pickDeadline()-w.now())
	case r < 84:
		if rnd.IntN(10) == 0 {
			th.setActive(i, 0)
			return
		}
		th.setActive(i, th.pickDeadline()-w.now())
	case r < 92:
		th.closeConn(i, true)
	default:
		// A timed-out connection stays open disarmed until it is re-armed
		// or closed; disarming an unarmed one cancels an unscheduled
		// element (TW-6).
		if th.refs[i].Deadline().IsZero() && rnd.IntN(3) > 0 {
			th.arm(i)
			return
		}
		th.setInactivity(i, 0)
		th.setActive(i, 0)
	}
}

// dueThisTick finds an open connection with an inactivity timeout whose
// wheel deadline falls later in the current tick: its bucket comes due at
// the next pass (searched from a random place, to spread the choice).
func (th *Thread) dueThisTick() (int, bool) {
	w := th.w
	now, next := w.at(w.now()), w.at(w.cfg.Plan.GridAfter(w.now())-time.Millisecond)
	start := w.s.Rand().IntN(len(th.open))
	for k := range th.open {
		i := th.open[(start+k)%len(th.open)]
		if th.info[i].idle <= 0 || th.refs[i].InactivityDeadline().IsZero() {
			continue
		}
		if at, held := th.conns[i].WheelDeadline(); held && !at.Before(now) && at.Before(next) {
			return i, true
		}
	}
	return 0, false
}

// armPlan is a random arming drawn ahead of the connection it is for: an
// active and an inactivity timeout, 0 for one not set.
type armPlan struct{ active, idle time.Duration }

// drawArm draws a random inactivity or active timeout, or both. The
// opener draws it before it asks whether to make the open (sim.Keep), so
// that a dropped open moves none of the task's later draws: the opener's
// n-th draw is the same whichever opens before it a shrinker dropped.
//
// A draw below noArm arms nothing: a seed's run never draws one (one in
// 2^54), but a shrinker's smallest draw does, so a counterexample carries
// no setter for the connections it only opens. The kind is the draw's low
// two bits, which is what IntN(4) took from it (one draw either way).
func (th *Thread) drawArm() armPlan {
	const noArm = 1 << 10
	rnd := th.w.s.Rand()
	var p armPlan
	x := rnd.Uint64()
	if x < noArm {
		return p
	}
	switch x & 3 {
	case 0:
		p.active = th.pickDeadline() - th.w.now()
	case 1:
		p.active = th.pickDeadline() - th.w.now()
		p.idle = th.pickDeadline() - th.w.now()
	default:
		p.idle = th.pickDeadline() - th.w.now()
	}
	return p
}

// arm gives the open connection i a random inactivity or active timeout,
// or both, each one operation a shrinker may drop.
func (th *Thread) arm(i int) {
	p := th.drawArm()
	if p.active != 0 {
		th.setActive(i, p.active)
	}
	if p.idle != 0 {
		th.setInactivity(i, p.idle)
	}
}

// openArmed opens a connection and arms it as p says: one operation for a
// shrinker, which asked Keep for the open (so the arming asks no Keep of
// its own, and a dropped open makes as many Keep calls as a kept one).
func (th *Thread) openArmed(p armPlan) int {
	i := th.openConn()
	if p.active != 0 {
		th.doSetActive(i, p.active)
	}
	if p.idle != 0 {
		th.doSetInactivity(i, p.idle)
	}
	return i
}

// openBurst opens one connection, or a burst of up to BurstMax with one
// deadline (more than the budget comes due in one bucket, TW-4).
func (th *Thread) openBurst() {
	w := th.w
	rnd := w.s.Rand()
	n := 1
	if rnd.IntN(4) == 0 {
		n = 1 + rnd.IntN(w.cfg.BurstMax)
	}
	n = min(n, w.cfg.MaxConns-len(th.open))
	if n <= 0 {
		return
	}
	d := th.pickDeadline() - w.now()
	p := armPlan{idle: d}
	if rnd.IntN(2) == 0 {
		p = armPlan{active: d}
	}
	for range n { // no time passes between these: one deadline
		if w.s.Keep(sim.KeepOperation) {
			th.openArmed(p)
		}
	}
}

// activityOp makes activity on connection i. It sometimes waits until just
// after the wheel's (early) deadline for the connection, before the pass
// that visits its bucket (TW-1); on an aligned thread it often waits for
// the instant that puts the new deadline exactly on a tick, the boundary
// where "passed" means strictly after (TW-2). Activity whose new deadline
// would fall in a quiet window is skipped.
func (th *Thread) activityOp(ctx context.Context, i int) {
	w := th.w
	rnd := w.s.Rand()
	d := th.info[i].idle
	if th.refs[i].InactivityDeadline().IsZero() || d <= 0 {
		th.activity(i) // a no-op on both cops
		return
	}
	if rnd.IntN(2) == 0 {
		// Often wait until just after the wheel's deadline for it, before
		// the pass that visits its bucket: that pass must find the later
		// deadline and re-arm, not fire (TW-1).
		if at, held := th.conns[i].WheelDeadline(); held {
			t := since(at) + time.Millisecond
			if t > w.now() && t < w.cfg.Plan.GridAfter(w.now()) && w.cfg.Plan.OpAllowed(t) {
				w.sleepUntil(ctx, t)
				th.flush(w.now())
				if ctx.Err() != nil || th.pos[i] < 0 || th.refs[i].InactivityDeadline().IsZero() || th.info[i].idle != d || w.now() != t {
					return // changed while we waited
				}
			}
		}
	} else if th.Cfg.Aligned && rnd.IntN(2) == 0 {
		g := w.cfg.Plan.GridAfter(w.now() + d)
		if at := g - d; at >= w.now() && at-w.now() < 3*w.cfg.Plan.Tick && w.cfg.Plan.OpAllowed(at) {
			w.sleepUntil(ctx, at)
			th.flush(w.now())
			if ctx.Err() != nil || th.pos[i] < 0 || th.refs[i].InactivityDeadline().IsZero() || th.info[i].idle != d || w.now() != at {
				return // changed while we waited
			}
		}
	}
	if !w.cfg.Plan.DeadlineAllowed(w.now()+d, th.Cfg.Aligned) {
		return
	}
	th.activity(i)
}

// pickDeadline draws an allowed deadline: mostly seconds to minutes away,
// sometimes up to MaxTimeout (beyond small rings, TW-5), at a random
// millisecond, and on aligned threads often exactly on a tick.
func (th *Thread) pickDeadline() time.Duration {
	w := th.w
	rnd := w.s.Rand()
	var d time.Duration
	switch rnd.IntN(5) {
	case 0, 1:
		d = time.Duration(1+rnd.IntN(20)) * time.Second
	case 2:
		d = time.Duration(20+rnd.IntN(160)) * time.Second
	case 3:
		d = time.Duration(rnd.Int64N(int64(w.cfg.MaxTimeout)))
	default:
		d = time.Duration(1+rnd.IntN(4)) * th.ring() / 2 // around the ring: wraps
	}
	d += time.Duration(rnd.IntN(1000)) * time.Millisecond
	at := w.now() + max(d, time.Millisecond)
	if th.Cfg.Aligned && rnd.IntN(2) == 0 {
		at = w.cfg.Plan.GridAfter(at)
	}
	return w.cfg.Plan.NextDeadline(at, th.Cfg.Aligned)
}

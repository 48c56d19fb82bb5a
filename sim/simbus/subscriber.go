package simbus

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Subscriber is one subscription: a faulty link from the bus, a bounded
// queue of messages in flight, and one delivery task that calls the
// handler in order of arrival.
type Subscriber[M any] struct {
	bus     *Bus[M]
	name    string
	faults  Faults
	handler func(M)
	out     *outages
	m       *metrics

	recs    []Record[M]
	q       queue
	order   uint64
	lastAt  int64  // latest arrival of an in-order message: FIFO floor
	maxSeen uint64 // highest Seq delivered so far, to detect overtaking
	closed  bool

	idle    rt.Event           // never set: the delivery task waits on it with a context
	wake    context.CancelFunc // ends the delivery task's current wait; nil when not waiting
	waitFor int64              // the arrival instant the task waits for (max when idle)
}

// Name returns the subscriber's name.
func (sub *Subscriber[M]) Name() string { return sub.name }

// Faults returns the subscriber's link faults.
func (sub *Subscriber[M]) Faults() Faults { return sub.faults }

// Stats returns a copy of the subscriber's counters.
func (sub *Subscriber[M]) Stats() Stats { return sub.m.snapshot() }

// Registry returns the subscriber's metrics (simbus_*).
func (sub *Subscriber[M]) Registry() *stats.Registry { return &sub.m.reg }

// Records returns a copy of what became of every message published while
// subscribed, in publish order.
func (sub *Subscriber[M]) Records() []Record[M] {
	out := make([]Record[M], len(sub.recs))
	for i, r := range sub.recs {
		out[i] = r.clone()
	}
	return out
}

// Outages returns the disconnections known so far: the partition windows
// and the reconnect gaps drawn up to the latest publish, in time order.
func (sub *Subscriber[M]) Outages() []Window { return sub.out.all() }

// Close unsubscribes: messages still in flight or queued are lost with
// CauseClosed, later publishes skip this subscriber, and the delivery task
// ends (after the handler call in progress, if any). Closing twice is a
// no-op.
func (sub *Subscriber[M]) Close() {
	if sub.closed {
		return
	}
	sub.closed = true
	for sub.q.Len() > 0 {
		it := sub.q.pop()
		r := &sub.recs[it.rec]
		if len(r.Calls) == 0 && !it.dup {
			sub.lose(r, CauseClosed)
		}
	}
	sub.m.queueLen.Set(0)
	sub.bus.s.Tracef("simbus %s closed", sub.name)
	sub.interrupt()
}

func (sub *Subscriber[M]) interrupt() {
	if sub.wake != nil {
		sub.wake()
		sub.wake = nil
	}
}

func (sub *Subscriber[M]) lose(r *Record[M], c Cause) {
	s := sub.bus.s
	r.Cause = c
	sub.m.lost.With(c.String()).Inc()
	s.Tracef("simbus %s lost #%d from %s: %v", sub.name, r.Seq, r.From, c)
	if s.Recording() {
		protocol.Message(s, record.EventLost, int64(r.Seq), sub.name, "#%d from %s lost: %v", r.Seq, r.From, c)
	}
}

// offer decides the fate of one message for this subscriber at its publish
// instant now: lost (and why), or queued to arrive at a drawn instant, and
// maybe a second time.
//
// Each fault it decides is optional (sim.Keep(sim.KeepFault), asked once
// its draws are made): a delay from the tail, a reordering hold, a random
// loss, a duplicate (and each reconnect gap and partition window, see
// outages). A dropped one takes the fault-free path: a delay within the
// normal range, FIFO order, delivery without a duplicate; it draws no more
// than the fault would have, so the rest of an edited run's choices stay
// where they were.
func (sub *Subscriber[M]) offer(seq uint64, from string, m M, now time.Time) {
	s := sub.bus.s
	r := s.Rand()
	f := &sub.faults
	sub.recs = append(sub.recs, Record[M]{Seq: seq, From: from, Msg: m, SentAt: now})
	idx := len(sub.recs) - 1
	rec := &sub.recs[idx]
	sub.m.sent.Inc()

	sent := elapsed(now)
	d := sub.delay(r, seq, false)
	at := sent + int64(d)
	if extra := f.slowdownAt(time.Duration(sent)); extra > 0 && s.Keep(sim.KeepFault) {
		at += int64(extra)
		if s.Recording() {
			s.Injected("simbus %s: #%d slowed %v (slow link)", sub.name, seq, extra)
		}
	}
	held := f.ReorderProb > 0 && r.Float64() < f.ReorderProb
	if held {
		hold := uniform(r, f.ReorderMin, f.ReorderMax)
		if held = s.Keep(sim.KeepFault); held {
			at += int64(hold)
			if s.Recording() {
				s.Injected("simbus %s: #%d held back %v (reorder)", sub.name, seq, hold)
			}
		}
	}
	if !held {
		at = max(at, sub.lastAt) // FIFO: not before the previous message
	}
	if c := sub.outage(sent, at); c != CauseNone {
		sub.lose(rec, c)
		return
	}
	lossDropped := false
	if f.LossProb > 0 && r.Float64() < f.LossProb {
		if s.Keep(sim.KeepFault) {
			if s.Recording() {
				s.Injected("simbus %s: #%d lost (random loss)", sub.name, seq)
			}
			sub.lose(rec, CauseLoss)
			return
		}
		lossDropped = true // delivered, and drawing nothing the loss would not have
	}
	if sub.q.Len() >= sub.bus.cfg.QueueLen {
		sub.lose(rec, CauseOverflow)
		return
	}
	if !held {
		sub.lastAt = at
	} else {
		s.Tracef("simbus %s holds #%d back %v past later messages (reorder)", sub.name, seq, time.Duration(at-sent)-d)
	}
	sub.enqueue(item{at: at, rec: idx})
	if !lossDropped && f.DupProb > 0 && r.Float64() < f.DupProb {
		d2 := sub.delay(r, seq, true)
		at2 := at + int64(d2)
		// The copy travels on the same link: it dies if the link drops
		// before it arrives, and needs room in the queue.
		if sub.outage(at, at2) == CauseNone && sub.q.Len() < sub.bus.cfg.QueueLen && s.Keep(sim.KeepFault) {
			sub.enqueue(item{at: at2, rec: idx, dup: true})
			s.Tracef("simbus %s will get #%d twice (+%v, +%v)", sub.name, seq, time.Duration(at), time.Duration(at2))
			if s.Recording() {
				s.Injected("simbus %s: #%d duplicated, again at +%v", sub.name, seq, time.Duration(at2))
			}
		}
	}
}

// delay draws a message's time in flight (Delay.Draw's draws exactly). A
// delay from the tail is a fault: dropped (sim.Keep), the message takes
// the normal delay closest to the drawn one.
func (sub *Subscriber[M]) delay(r *rand.Rand, seq uint64, dup bool) time.Duration {
	d := sub.faults.Delay
	if d.TailProb > 0 && r.Float64() < d.TailProb {
		v := uniform(r, d.TailMin, d.TailMax)
		s := sub.bus.s
		if !s.Keep(sim.KeepFault) {
			return min(max(v, d.Min), d.Max)
		}
		if s.Recording() {
			what := ""
			if dup {
				what = "'s duplicate"
			}
			s.Injected("simbus %s: #%d%s delayed %v (the delay tail)", sub.name, seq, what, v)
		}
		return v
	}
	return uniform(r, d.Min, d.Max)
}

// outage returns why a message in flight during [from, to] (virtual ns) is
// lost to a disconnection, or CauseNone.
func (sub *Subscriber[M]) outage(from, to int64) Cause {
	s := sub.bus.s
	c, ok := sub.out.hit(s.Rand(), time.Duration(from), time.Duration(to), func(w Window) bool {
		if !s.Keep(sim.KeepFault) {
			return false
		}
		sub.m.disconnect.Inc()
		s.Tracef("simbus %s will be disconnected %v (reconnect gap)", sub.name, w)
		if s.Recording() {
			s.Injected("simbus %s disconnected during %v (reconnect gap)", sub.name, w)
		}
		return true
	})
	if !ok {
		s.Failf("simbus: subscriber %s drew more than %d reconnect gaps: raise Reconnect.MeanEvery", sub.name, maxGaps)
	}
	return c
}

func (sub *Subscriber[M]) enqueue(it item) {
	sub.order++
	it.order = sub.order
	sub.q.push(it)
	n := int64(sub.q.Len())
	sub.m.queueLen.Set(n)
	sub.m.queueMax.SetMax(n)
	if sub.wake != nil && it.at < sub.waitFor {
		sub.interrupt() // the new message is due before what the task waits for
	}
}

// run is the delivery task. Each iteration delivers one message or waits
// for the next one to arrive; it ends when the subscriber closes, and the
// run's step and time limits bound it otherwise.
func (sub *Subscriber[M]) run() {
	s := sub.bus.s
	for !sub.closed {
		now := elapsed(s.Now())
		if sub.q.Len() == 0 {
			sub.wait(never)
			continue
		}
		if head := sub.q[0]; head.at > now {
			sub.wait(head.at)
			continue
		}
		sub.deliver(sub.q.pop())
	}
}

// never is the arrival instant an idle delivery task waits for.
const never = int64(1<<63 - 1)

// wait blocks the delivery task until virtual instant until (never: no
// deadline), or until a publish or Close interrupts it by cancelling its
// context, which is not a scheduling point, so Publish stays atomic.
func (sub *Subscriber[M]) wait(until int64) {
	s := sub.bus.s
	var ctx context.Context
	var cancel context.CancelFunc
	if until == never {
		ctx, cancel = s.WithCancel(context.Background())
	} else {
		ctx, cancel = s.WithDeadline(context.Background(), sim.Epoch.Add(time.Duration(until)))
	}
	sub.wake, sub.waitFor = cancel, until
	_ = sub.idle.Wait(ctx)
	sub.wake = nil
	cancel()
}

func (sub *Subscriber[M]) deliver(it item) {
	s := sub.bus.s
	sub.m.queueLen.Set(int64(sub.q.Len()))
	rec := &sub.recs[it.rec]
	if it.dup {
		sub.m.duplicated.Inc()
	} else {
		sub.m.delivered.Inc()
		if rec.Seq < sub.maxSeen {
			rec.Reordered = true
			sub.m.reordered.Inc()
		}
		sub.maxSeen = max(sub.maxSeen, rec.Seq)
	}
	rec.Calls = append(rec.Calls, s.Now())
	sub.m.calls.Inc()
	if s.Recording() {
		how := ""
		switch {
		case it.dup:
			how = " (duplicate)"
		case rec.Reordered:
			how = " (reordered)"
		}
		protocol.Message(s, record.EventReceive, int64(rec.Seq), sub.name, "#%d from %s, sent +%v%s", rec.Seq, rec.From, rec.SentAt.Sub(sim.Epoch), how)
	}
	switch {
	case it.dup:
		s.Tracef("simbus %s got #%d from %s again (duplicate)", sub.name, rec.Seq, rec.From)
	case rec.Reordered:
		s.Tracef("simbus %s got #%d from %s after a later message (reordered)", sub.name, rec.Seq, rec.From)
	default:
		s.Tracef("simbus %s got #%d from %s, sent +%v", sub.name, rec.Seq, rec.From, rec.SentAt.Sub(sim.Epoch))
	}
	sub.handler(rec.Msg)
}

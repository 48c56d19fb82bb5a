package sim

import (
	"fmt"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Channels of the simulator follow Go's rules: an unbuffered send and
// receive meet, a buffered channel queues up to its size, close wakes every
// waiter (receivers get the zero value, senders panic). Every operation is a
// scheduling point on the channel before it takes effect; waiters queue in
// FIFO order, so which task a send wakes is a function of the history.

// NewChan implements rt.Runtime.
func (s *Sim) NewChan(name string, size int) rt.AnyChan {
	if size < 0 {
		panic("sim: NewChan with a negative size")
	}
	id, n := s.newObj("chan", name)
	return &simChan{s: s, id: id, name: n, size: size}
}

type simChan struct {
	s      *Sim
	id     int32
	name   string
	size   int
	buf    []any // FIFO of buffered values, at most size
	closed bool
	recvq  []*chanWaiter
	sendq  []*chanWaiter
}

// chanWaiter is one blocked operation on a channel: a plain send or receive,
// or one case of a select. The cases of one select share their selWait, and
// the first case to go on fires it, so that the others are skipped.
type chanWaiter struct {
	w   *selWait
	idx int // the case's index in its select
	val any // a send's value
}

// selWait is what a blocked task waits for: a send or receive (one case) or
// a select (several). Whoever completes a case fills it and wakes the task.
type selWait struct {
	t         *task
	fired     bool
	idx       int  // the case that went on
	val       any  // what a receive got
	ok        bool // a receive got a sent value (not a close)
	closedErr bool // a send was woken by close: it panics
}

func (w *selWait) fire(s *Sim, idx int, val any, ok bool) {
	w.fired, w.idx, w.val, w.ok = true, idx, val, ok
	s.wake(w.t)
}

// popLive takes the first waiter of q whose select has not fired yet.
func popLive(q *[]*chanWaiter) *chanWaiter {
	for len(*q) > 0 {
		w := (*q)[0]
		(*q)[0] = nil
		*q = (*q)[1:]
		if !w.w.fired {
			return w
		}
	}
	return nil
}

// hasLive reports whether q holds a waiter that can still go on.
func hasLive(q []*chanWaiter) bool {
	for _, w := range q {
		if !w.w.fired {
			return true
		}
	}
	return false
}

func (c *simChan) Len() int {
	c.s.touch(c.id)
	return len(c.buf)
}

func (c *simChan) Cap() int { return c.size }

// canSend reports whether a send would go on now (or panic, on a closed
// channel); canRecv the same for a receive.
func (c *simChan) canSend() bool { return c.closed || hasLive(c.recvq) || len(c.buf) < c.size }
func (c *simChan) canRecv() bool { return c.closed || hasLive(c.sendq) || len(c.buf) > 0 }

// send performs a send that canSend allowed.
func (c *simChan) send(v any) {
	s := c.s
	if c.closed {
		panic(fmt.Sprintf("send on closed channel (%s)", c.name))
	}
	if s.rec != nil {
		s.recordObj(record.EventSend, c.name, "chan send")
	}
	if w := popLive(&c.recvq); w != nil {
		w.w.fire(s, w.idx, v, true)
		return
	}
	c.buf = append(c.buf, v)
}

// recv performs a receive that canRecv allowed.
func (c *simChan) recv() (any, bool) {
	s := c.s
	if w := popLive(&c.sendq); w != nil {
		v := w.val
		if c.size > 0 { // the buffer is full: take its head, queue the sender's value
			v = c.buf[0]
			c.buf[0] = nil
			c.buf = append(c.buf[1:], w.val)
		}
		w.w.fire(s, w.idx, nil, true)
		c.traceRecv()
		return v, true
	}
	if len(c.buf) > 0 {
		v := c.buf[0]
		c.buf[0] = nil
		c.buf = c.buf[1:]
		c.traceRecv()
		return v, true
	}
	return nil, false // closed and drained
}

func (c *simChan) traceRecv() {
	if c.s.rec != nil {
		c.s.recordObj(record.EventReceive, c.name, "chan receive")
	}
}

func (c *simChan) Send(v any) {
	s := c.s
	s.yieldOn(c.id)
	if c.canSend() {
		c.send(v)
		return
	}
	w := &selWait{t: s.cur()}
	c.sendq = append(c.sendq, &chanWaiter{w: w, val: v})
	for !w.fired {
		s.block("chan send", c.name)
	}
	if w.closedErr {
		panic(fmt.Sprintf("send on closed channel (%s)", c.name))
	}
}

func (c *simChan) Recv() (any, bool) {
	s := c.s
	s.yieldOn(c.id)
	if c.canRecv() {
		return c.recv()
	}
	w := &selWait{t: s.cur()}
	c.recvq = append(c.recvq, &chanWaiter{w: w})
	for !w.fired {
		s.block("chan receive", c.name)
	}
	if w.ok {
		c.traceRecv()
	}
	return w.val, w.ok
}

func (c *simChan) Close() {
	s := c.s
	s.yieldOn(c.id)
	if c.closed {
		panic(fmt.Sprintf("close of closed channel (%s)", c.name))
	}
	c.closed = true
	if s.rec != nil {
		s.recordObj(record.EventNote, c.name, "close")
	}
	for w := popLive(&c.recvq); w != nil; w = popLive(&c.recvq) {
		w.w.fire(s, w.idx, nil, false)
	}
	for w := popLive(&c.sendq); w != nil; w = popLive(&c.sendq) {
		w.w.closedErr = true
		w.w.fire(s, w.idx, nil, false)
	}
}

package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// Classes of reads, as the claims select them.
const (
	classNonMember = "non-member" // OC read by a user never a member of the channel (OC-2)
	classMember    = "member"     // OC read by a user whose membership the flight changes (OC-7)
	classMS        = "ms"         // membership check (MS-2, MS-10)
	classCross     = "cross"      // OC read naming another community's channel (OC-10)
)

// read is one recorded answer: the relay's own instants (wall clock ns).
type read struct {
	Relay     int
	Op        string
	Class     string
	Community authz.ID
	User      authz.ID
	Channel   authz.ID
	Invoke    int64
	Return    int64
	OK        bool
}

// history is what a flight recorded: every answered read, every commit
// (with the writer's instants), each episode's race gap, and errors.
type history struct {
	mu      sync.Mutex
	reads   []read
	commits []flight.Commit
	gaps    []int64 // commit At − the racing read's invoke, ns
	errs    map[string]int
	faults  map[string]int // churn faults applied, by kind
}

func (h *history) addFault(kind string) {
	h.mu.Lock()
	if h.faults == nil {
		h.faults = map[string]int{}
	}
	h.faults[kind]++
	h.mu.Unlock()
}

func (h *history) addRead(r read) {
	h.mu.Lock()
	h.reads = append(h.reads, r)
	h.mu.Unlock()
}

func (h *history) addCommit(c flight.Commit) {
	h.mu.Lock()
	h.commits = append(h.commits, c)
	h.mu.Unlock()
}

func (h *history) addGap(g int64) {
	h.mu.Lock()
	h.gaps = append(h.gaps, g)
	h.mu.Unlock()
}

func (h *history) addErr(what string) {
	h.mu.Lock()
	if h.errs == nil {
		h.errs = map[string]int{}
	}
	h.errs[what]++
	h.mu.Unlock()
}

// ask sends one read to relay i and records its answer; a failed read is
// counted (by kind) and not judged.
func (e *env) ask(ctx context.Context, h *history, i int, op, class string, community, user, channel authz.ID) (read, bool) {
	resp, err := e.relays[i].Call(ctx, flight.Request{Op: op, Community: community, User: user, Channel: channel})
	if err == nil && resp.Err != "" {
		err = fmt.Errorf("%s", resp.Err)
	}
	if err != nil {
		h.addErr(op + " failed")
		return read{}, false
	}
	r := read{Relay: i, Op: op, Class: class, Community: community, User: user, Channel: channel,
		Invoke: resp.Invoke, Return: resp.Return, OK: resp.OK}
	h.addRead(r)
	return r, true
}

// changed runs the write path on relay i after a commit: local drop, then
// publish to the others.
func (e *env) changed(ctx context.Context, h *history, i int, m authz.Message) {
	resp, err := e.relays[i].Call(ctx, flight.Request{Op: flight.OpChanged, Msg: &m})
	if err != nil || resp.Err != "" {
		h.addErr("changed failed")
	}
}

// invalidate applies m on relay i as its receiving path would.
func (e *env) invalidate(ctx context.Context, i int, m authz.Message) error {
	resp, err := e.relays[i].Call(ctx, flight.Request{Op: flight.OpInvalidate, Msg: &m})
	if err == nil && resp.Err != "" {
		err = fmt.Errorf("relay %d: invalidate: %s", i, resp.Err)
	}
	return err
}

package pods

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// FaultKind is one way a database or bus call goes wrong.
type FaultKind string

const (
	FaultError  FaultKind = "error"  // the call fails with an error of its own
	FaultCancel FaultKind = "cancel" // the caller's context is cancelled during the call
	FaultSlow   FaultKind = "slow"   // the call answers, late
	// FaultNone arms nothing but the arm's OnFire: a check that acts at a
	// call's start without changing it.
	FaultNone FaultKind = "none"
)

// FaultKinds is every kind each cell of Flows is flown with.
var FaultKinds = []FaultKind{FaultError, FaultCancel, FaultSlow}

// ErrInjected is wrapped by every error an Injector injects.
var ErrInjected = errors.New("pods: injected fault")

// The calls of Flows, as the Injector's hooks see them.
const (
	CallAcquire  = "authz.Pool.Acquire"
	CallPublish  = "authz.Publisher.Publish"
	callConnPfx  = "authz.Conn."
	callOfMember = callConnPfx + "MemberChannels"
)

// stmtCalls maps the store's statements to the Conn methods that run them.
var stmtCalls = map[string]string{
	StmtMemberChannels:     callOfMember,
	StmtListedOpenChannels: callConnPfx + "ListedOpenChannels",
	StmtActiveMemberships:  callConnPfx + "ActiveMemberships",
	StmtIsActiveMember:     callConnPfx + "IsActiveMember",
}

// Arm is one fault a directed check sets on the Nth call (1-based, counted
// from when it was armed) of Call.
type Arm struct {
	Call string
	Nth  int
	Kind FaultKind
	// Slow is the latency of a FaultSlow; Cancel cancels the caller's
	// context for a FaultCancel.
	Slow   time.Duration
	Cancel context.CancelFunc
	// OnFire, if set, runs when the arm fires, at the call's start, inside
	// the hook: it must not block (it may start a task).
	OnFire func()

	seen  int
	fired bool
}

// Fired reports whether the arm's call was reached and its fault applied.
func (a *Arm) Fired() bool { return a.fired }

// Injector is the fault hooks of a world (simdb's Hook and AcquireHook,
// simbus's PublishHook) for checks that fly each cell of Flows under each
// FaultKind on purpose: armed faults fire on the calls they name, every
// other call runs clean.
type Injector struct {
	s    *sim.Sim
	arms []*Arm
	// Otherwise, if set, decides the fault of a database call no arm
	// fires on (a workload's background latency).
	Otherwise func(call string) simdb.Fault
}

// NewInjector returns an injector with nothing armed.
func NewInjector(s *sim.Sim) *Injector { return &Injector{s: s} }

// Arm sets a; it stays armed until Disarm.
func (in *Injector) Arm(a *Arm) *Arm {
	in.arms = append(in.arms, a)
	return a
}

// Disarm removes every arm.
func (in *Injector) Disarm() { in.arms = nil }

// Wire sets the injector's hooks in a world's configuration. The database
// hook it sets replaces cfg.DB.Hook.
func (in *Injector) Wire(cfg *Config) {
	cfg.DB.Hook = func(st simdb.Statement) simdb.Fault { return in.dbFault(stmtCalls[st.Name]) }
	cfg.DB.AcquireHook = func(simdb.Statement) simdb.Fault { return in.dbFault(CallAcquire) }
	cfg.Bus.PublishHook = func(string) simbus.PublishFault {
		a := in.match(CallPublish)
		if a == nil {
			return simbus.PublishFault{}
		}
		switch a.Kind {
		case FaultNone:
			return simbus.PublishFault{}
		case FaultError:
			return simbus.PublishFault{Err: a.err()}
		case FaultCancel:
			return simbus.PublishFault{Before: a.Cancel}
		}
		return simbus.PublishFault{Latency: a.Slow}
	}
}

// match returns the arm that fires on this call of call, if any.
func (in *Injector) match(call string) *Arm {
	var hit *Arm
	for _, a := range in.arms {
		if a.Call != call || a.fired {
			continue
		}
		a.seen++
		if a.seen == a.Nth && hit == nil {
			if a.Kind == FaultCancel && a.Cancel == nil {
				in.s.Failf("pods: a cancel armed on %s without a cancel function", call)
			}
			a.fired = true
			hit = a
			in.s.Tracef("pods: injecting %s on %s #%d", a.Kind, call, a.Nth)
			if a.OnFire != nil {
				a.OnFire()
			}
		}
	}
	return hit
}

func (a *Arm) err() error { return fmt.Errorf("%w: %s on %s #%d", ErrInjected, a.Kind, a.Call, a.Nth) }

func (in *Injector) dbFault(call string) simdb.Fault {
	a := in.match(call)
	if a == nil && in.Otherwise != nil {
		return in.Otherwise(call)
	}
	if a == nil {
		return simdb.Fault{}
	}
	switch a.Kind {
	case FaultNone:
		return simdb.Fault{}
	case FaultError:
		return simdb.Fault{Err: a.err(), Required: true}
	case FaultCancel:
		return simdb.Fault{AfterSnapshot: a.Cancel, Required: true}
	}
	return simdb.Fault{Fixed: true, Latency: a.Slow, Required: true}
}

// CellsOf returns the cells of Flows that family's checks fly (OC, MS or
// Relay), in the table's order.
func CellsOf(family string) []FlowCall {
	var out []FlowCall
	for _, c := range Flows {
		if c.Family == family {
			out = append(out, c)
		}
	}
	return out
}

// FaultProbes are the probes of cells flown under every fault kind, each
// to be reached at least once (FaultProbe): a check declares them so that
// a cell or kind it never flew fails it.
func FaultProbes(cells []FlowCall) []claims.Probe {
	var out []claims.Probe
	for _, c := range cells {
		for _, k := range FaultKinds {
			out = append(out, claims.Probe{Name: FaultProbe(c, k), What: fmt.Sprintf("%s flown with a %s", c, k), Min: 1})
		}
	}
	return out
}

// FaultProbe names the probe a check reaches when it has flown cell under
// kind and seen the fault's effect in the answer.
func FaultProbe(cell FlowCall, kind FaultKind) string {
	return fmt.Sprintf("pods/fault/%s/%s/%s", kind, cell.Flow, cell.Call)
}

// Counters is a scrape of every counter series of the given exporters,
// keyed "name" or "name{label=\"value\"}" (checks.Scrape).
func Counters(es ...checks.Exporter) (map[string]int64, error) {
	out := map[string]int64{}
	for _, e := range es {
		sc, err := checks.Scrape(e)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, sc.Values)
	}
	return out, nil
}

// CounterDiff lists the series whose change from before to after differs
// from want (series absent from want must not change), sorted.
func CounterDiff(before, after, want map[string]int64) []string {
	var out []string
	keys := slices.Sorted(maps.Keys(after))
	for k := range want { //windtunnel:unordered collected, then sorted
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if got := after[k] - before[k]; got != want[k] {
			out = append(out, fmt.Sprintf("%s changed by %d, the harness counted %d", k, got, want[k]))
		}
	}
	return out
}

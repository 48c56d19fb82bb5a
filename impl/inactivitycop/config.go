package inactivitycop

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// Defaults from the seed (Apache Traffic Server PR #13821).
const (
	// DefaultTick: the cop runs once a second.
	DefaultTick = timerwheel.DefaultTick
	// DefaultBuckets: 4,096 one-second buckets.
	DefaultBuckets = timerwheel.DefaultBuckets
	// DefaultBudget: proxy.config.net.inactivity_cop_budget, connections
	// visited per pass before the pass yields (TW-4).
	DefaultBudget = 4096
	// DefaultContinuation: an exhausted pass continues 1 ms later (TW-4).
	DefaultContinuation = time.Millisecond
	// DefaultMaxConns bounds a net thread's connection queue: 262,144
	// connections, far above the seed's busiest host (~358k connections over
	// 64 cores, about 5,600 per net thread), so a default configuration
	// evicts only under overload (TW-10).
	DefaultMaxConns = 1 << 18
)

// Config configures a Cop or a Handler. Start from DefaultConfig: every
// field is validated, and a zero is an error rather than a silent default.
type Config struct {
	// Tick is the time between passes and the wheel's bucket width.
	Tick time.Duration
	// Buckets is the wheel's ring size, a power of two.
	Buckets int
	// Budget is the number of connections a pass may visit before it
	// yields.
	Budget int
	// Continuation is the pause after a pass that hit its budget; at most
	// Tick.
	Continuation time.Duration
	// MaxConns bounds the thread's connection queue. Opening a connection
	// when MaxConns are open first evicts the least recently active one: the
	// one whose last opening or NetActivity is the oldest. It is closed and
	// reported to the handler as an Evicted timeout (TW-10).
	MaxConns int
	// Audit turns on the opt-in audit (the seed's inactivity_cop_audit
	// debug tag): every pass then checks every open connection for a live
	// deadline the wheel will never visit or holds too late (TW-7). It
	// costs a full scan per pass.
	Audit bool
	// Metrics receives the counters; nil gives the Cop its own. Handlers
	// of one process usually share one Metrics, like the seed's global
	// metrics summed over net threads.
	Metrics *Metrics
}

// DefaultConfig returns the seed's configuration: 1 s tick, 4,096 buckets,
// budget 4,096, 1 ms continuation, audit off, and a queue of
// DefaultMaxConns connections.
func DefaultConfig() Config {
	return Config{
		Tick:         DefaultTick,
		Buckets:      DefaultBuckets,
		Budget:       DefaultBudget,
		Continuation: DefaultContinuation,
		MaxConns:     DefaultMaxConns,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Tick <= 0:
		return fmt.Errorf("inactivitycop: Tick must be positive, got %v", c.Tick)
	case c.Buckets < 1 || c.Buckets > timerwheel.MaxBuckets || bits.OnesCount(uint(c.Buckets)) != 1:
		return fmt.Errorf("inactivitycop: Buckets must be a power of two in [1, %d], got %d", timerwheel.MaxBuckets, c.Buckets)
	case c.Budget <= 0:
		return fmt.Errorf("inactivitycop: Budget must be positive, got %d", c.Budget)
	case c.Continuation <= 0 || c.Continuation > c.Tick:
		return fmt.Errorf("inactivitycop: Continuation must be in (0, Tick=%v], got %v", c.Tick, c.Continuation)
	case c.MaxConns <= 0:
		return fmt.Errorf("inactivitycop: MaxConns must be positive, got %d", c.MaxConns)
	}
	return nil
}

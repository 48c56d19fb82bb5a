package simdb

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Defaults of a Config. DefaultPoolSize is the production store's default
// pool (pgstore: max(4, GOMAXPROCS)) at its floor, as a world has no CPUs
// of its own; a world that wants the membership seed's A/B pool of 50 asks
// for it.
const (
	DefaultPoolSize   = 4
	DefaultMaxWaiters = 10_000
	DefaultMaxCommits = 1 << 20

	maxPools = 1 << 10
)

// Statement describes one statement or write as it starts, for a Hook.
type Statement struct {
	Name  string    // the statement's name, or a write's "what"
	Write bool      // true for DB.Write
	Conn  int       // the connection's number (1..PoolSize×Pools); 0 for a write
	At    time.Time // the issue instant; a read's snapshot follows its lag (none when the Hook fixes its latency)
}

// Fault is what a Hook decides for one statement.
type Fault struct {
	// Err, if not nil, fails the statement: a read returns it instead of
	// rows, a write does not commit. It is returned as is after the
	// statement's latency, so the scenario can recognise its own errors.
	Err error
	// Latency replaces the drawn latency when Fixed is true: a scenario
	// can make one load slow enough to straddle a write (OC-2, MS-2). A
	// fixed read has no lag: its snapshot is at its issue instant, the
	// worst moment for a cache that counts its age from before the read.
	Latency time.Duration
	Fixed   bool
	// Required marks the fault as the scenario's premise rather than an
	// injected fault: a probe that takes the database offline to see what
	// a cache answers without it. A shrinker may drop an injected fault
	// (sim.Keep(sim.KeepFault)); it may not drop a premise, whose absence
	// would make the check report a failure of the edit, not of the code.
	// It applies to Err and to a Fixed latency.
	Required bool
	// Breaks, with Err, says the error broke the statement's connection (a
	// reset, a killed backend): the pool closes it at its Release, and its
	// next checkout opens it again (Connections), as pgxpool does.
	Breaks bool
	// AfterSnapshot, if set, runs right after a read's snapshot is taken,
	// after its lag (or a write has committed), before the statement's latency: the
	// first moment the world may act on the snapshot, at the same virtual
	// instant. It may block (say, Set an event a directed workload waits
	// on): the snapshot is already fixed.
	AfterSnapshot func()
}

// Hook lets a scenario direct faults at particular statements. It runs at
// the start of every statement and write, after the random draws, and must
// not block (it runs inside the statement, between two scheduling points).
type Hook func(Statement) Fault

// Config is a database's pool size, latency model and faults. A swarm seed
// picks one per run (see Swarm); String is its line in the run header.
type Config struct {
	// PoolSize is the number of connections (0: DefaultPoolSize). Acquire
	// waits, FIFO, while all are checked out.
	PoolSize int
	// Pools is the number of separate pools of PoolSize connections each
	// (0: one), as each production relay holds its own store's pool on a
	// shared server: AcquireFrom names the pool, and a pool's callers
	// wait for its own connections only.
	Pools int
	// Latency is drawn once per statement and per write.
	Latency Latency
	// ReadErrorProb is the probability that a statement fails with a
	// *TransientError (connection reset, serialization failure...).
	ReadErrorProb float64
	// WriteErrorProb is the probability that a write fails with a
	// *TransientError and does not commit.
	WriteErrorProb float64
	// Statements names every statement Query may run, like prepared
	// statements: counters are kept per name, and an unknown name is an
	// error instead of a silently new series.
	Statements []string
	// Hook, if set, may fail or slow down particular statements.
	Hook Hook
	// AcquireHook, if set, may fail, slow down or cancel particular
	// checkouts. It sees each Acquire once the request reaches the pool,
	// as a Statement named AcquireStatement; a Fixed latency is spent
	// before the checkout (a slow pool), an Err fails it after that, and
	// AfterSnapshot runs first, at the same instant (it may cancel the
	// caller's context).
	AcquireHook Hook
	// Connections makes a checkout open or ping its connection first, as
	// pgxpool's does (the zero value: never).
	Connections Connections
	// Observe, if set, is told each checkout's and each statement's
	// timing as it ends, and each Acquire that reached the pool and failed,
	// without changing any draw. It must not block.
	Observe func(Timing)
	// MaxWaiters bounds the queue of Acquire calls waiting for a
	// connection (0: DefaultMaxWaiters); past it Acquire fails with
	// ErrPoolQueueFull instead of queueing without limit.
	MaxWaiters int
	// MaxCommits bounds the commit log (0: DefaultMaxCommits); a run that
	// writes more fails, as the log is the checkers' source of truth and
	// must never be truncated.
	MaxCommits int
}

func validProb(name string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("simdb: %s must be in [0, 1], got %v", name, p)
	}
	return nil
}

// Validate reports the first problem with c, or nil. Zero limits mean the
// defaults and are valid.
func (c Config) Validate() error {
	if c.PoolSize < 0 {
		return fmt.Errorf("simdb: PoolSize must not be negative, got %d", c.PoolSize)
	}
	if c.Pools < 0 || c.Pools > maxPools {
		return fmt.Errorf("simdb: Pools must be in [0, %d], got %d", maxPools, c.Pools)
	}
	if c.MaxWaiters < 0 {
		return fmt.Errorf("simdb: MaxWaiters must not be negative, got %d", c.MaxWaiters)
	}
	if c.MaxCommits < 0 {
		return fmt.Errorf("simdb: MaxCommits must not be negative, got %d", c.MaxCommits)
	}
	if err := c.Latency.Validate(); err != nil {
		return err
	}
	if err := c.Connections.validate(); err != nil {
		return err
	}
	if err := validProb("ReadErrorProb", c.ReadErrorProb); err != nil {
		return err
	}
	if err := validProb("WriteErrorProb", c.WriteErrorProb); err != nil {
		return err
	}
	for i, name := range c.Statements {
		if name == "" || strings.ContainsAny(name, " {}\"\n") {
			return fmt.Errorf("simdb: statement name %q is empty or has a space, brace, quote or newline", name)
		}
		if slices.Contains(c.Statements[:i], name) {
			return fmt.Errorf("simdb: statement %q is declared twice", name)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.Pools == 0 {
		c.Pools = 1
	}
	if c.MaxWaiters == 0 {
		c.MaxWaiters = DefaultMaxWaiters
	}
	if c.MaxCommits == 0 {
		c.MaxCommits = DefaultMaxCommits
	}
	c.Statements = slices.Clone(c.Statements)
	return c
}

// String describes the pool, latency and faults for a run header, e.g.
// "db pool=4 latency=500µs–5ms, slow 2% of 200ms–3s read_errors=1% write_errors=off".
func (c Config) String() string {
	pool := c.PoolSize
	if pool == 0 {
		pool = DefaultPoolSize
	}
	if c.Pools > 1 {
		return fmt.Sprintf("db pools=%d×%d latency=%v read_errors=%s write_errors=%s", c.Pools, pool, c.Latency, pct(c.ReadErrorProb), pct(c.WriteErrorProb)) + c.hooks()
	}
	s := fmt.Sprintf("db pool=%d latency=%v read_errors=%s write_errors=%s", pool, c.Latency, pct(c.ReadErrorProb), pct(c.WriteErrorProb))
	return s + c.hooks()
}

// hooks is the run header's note of the hooks in place.
func (c Config) hooks() string {
	s := ""
	if c.Hook != nil {
		s += " hook=on"
	}
	if c.AcquireHook != nil {
		s += " acquire_hook=on"
	}
	if c.Connections.Lazy {
		s += " conns=lazy"
	}
	if c.Connections.IdlePing > 0 {
		s += fmt.Sprintf(" idle_ping=%v", c.Connections.IdlePing)
	}
	if c.Connections.OpenMax > 0 {
		s += fmt.Sprintf(" open=%v–%v", c.Connections.OpenMin, c.Connections.OpenMax)
	}
	return s
}

func pct(p float64) string {
	if p == 0 {
		return "off"
	}
	return fmt.Sprintf("%.3g%%", 100*p)
}

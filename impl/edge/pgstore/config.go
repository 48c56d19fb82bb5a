package pgstore

import (
	"fmt"
	"math"
	"regexp"
	"runtime"
	"time"
)

// Defaults for Config. The seeds give none of these numbers; the reasons are
// next to each.
const (
	// DefaultMinMaxConns is the smallest default pool size. The membership
	// seed's signed probes ran with a pool of 4, and pgxpool's own default is
	// max(4, NumCPU); pgstore uses GOMAXPROCS, the CPUs the process may use.
	DefaultMinMaxConns = 4

	// DefaultIdlePing is how long a connection may sit idle before it is
	// pinged on checkout, so that a connection the server closed meanwhile
	// (restart, idle timeout) is replaced instead of failing a statement.
	// It is pgxpool's default ShouldPing threshold.
	DefaultIdlePing = 1 * time.Second

	// DefaultMaxIdle is how long an idle connection is kept before the
	// pool's background health check closes it, returning server resources
	// after a burst. It is pgxpool's default MaxConnIdleTime.
	DefaultMaxIdle = 30 * time.Minute

	// DefaultConnectTimeout bounds dialling and authenticating one new
	// connection when the caller's context has a later deadline or none:
	// a checkout never hangs on an unreachable server.
	DefaultConnectTimeout = 5 * time.Second

	// DefaultMaxRows bounds the rows one statement may return. The seeds'
	// largest read is 16,385 memberships; a community with more listed open
	// channels than this is an error, not an unbounded allocation.
	DefaultMaxRows = 1 << 20

	// ApplicationName is reported to PostgreSQL (pg_stat_activity) unless
	// the connection string sets application_name.
	ApplicationName = "windtunnel-pgstore"
)

// Config tunes a Store. The zero value means every default.
type Config struct {
	// MaxConns is the number of connections the pool may hold (pgxpool's
	// MaxConns); Acquire waits while all are checked out. 0 means
	// max(DefaultMinMaxConns, GOMAXPROCS).
	MaxConns int

	// Schema, if set, is the PostgreSQL schema that holds the tables: it
	// becomes the search_path of every connection. It must be a plain
	// lower-case identifier ([a-z_][a-z0-9_]*). Empty means the server's
	// default search_path.
	Schema string

	// IdlePing: a connection idle for longer is pinged before it is handed
	// out, and replaced if the ping fails (pgxpool's ShouldPing). 0 means
	// DefaultIdlePing; negative means never ping.
	IdlePing time.Duration

	// MaxIdle: a connection idle for longer is closed by the pool's
	// background health check (pgxpool's MaxConnIdleTime; the check runs
	// every minute, or every pool_health_check_period of the connection
	// string). 0 means DefaultMaxIdle.
	MaxIdle time.Duration

	// ConnectTimeout bounds one new connection, also one pgxpool finishes
	// in the background after the Acquire that started it gave up. 0 means
	// DefaultConnectTimeout; a connect_timeout in the connection string is
	// used when it is shorter.
	ConnectTimeout time.Duration

	// MaxRows bounds the rows one statement may return; more is an error.
	// 0 means DefaultMaxRows.
	MaxRows int
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// withDefaults fills zero fields and rejects values that cannot work.
func (c Config) withDefaults() (Config, error) {
	if c.MaxConns == 0 {
		c.MaxConns = max(DefaultMinMaxConns, runtime.GOMAXPROCS(0))
	}
	if c.IdlePing == 0 {
		c.IdlePing = DefaultIdlePing
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = DefaultMaxIdle
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxRows == 0 {
		c.MaxRows = DefaultMaxRows
	}
	switch {
	case c.MaxConns < 0 || c.MaxConns > math.MaxInt32:
		return c, fmt.Errorf("pgstore: MaxConns must be positive and at most %d, got %d", math.MaxInt32, c.MaxConns)
	case c.MaxIdle < 0:
		return c, fmt.Errorf("pgstore: MaxIdle must be positive, got %v", c.MaxIdle)
	case c.ConnectTimeout < 0:
		return c, fmt.Errorf("pgstore: ConnectTimeout must be positive, got %v", c.ConnectTimeout)
	case c.MaxRows < 0:
		return c, fmt.Errorf("pgstore: MaxRows must be positive, got %d", c.MaxRows)
	case c.Schema != "" && !schemaName.MatchString(c.Schema):
		return c, fmt.Errorf("pgstore: Schema %q is not a plain lower-case identifier ([a-z_][a-z0-9_]*, at most 63 bytes)", c.Schema)
	}
	return c, nil
}

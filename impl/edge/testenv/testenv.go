// Package testenv connects integration tests to the PostgreSQL and Redis
// servers they run against, and decides what a test does when a server is
// not configured or not reachable.
//
// The servers are named by environment variables:
//
//	WINDTUNNEL_PG_URL       PostgreSQL connection string, for example
//	                        postgres://user:pass@127.0.0.1:5432/db?sslmode=disable
//	WINDTUNNEL_REDIS_ADDR   Redis host:port, or a redis:// URL
//	WINDTUNNEL_INTEGRATION  set to 1 by run.sh (and so by `make integration`)
//
// The rule is that integration tests never pass silently:
//
//   - Variable unset, WINDTUNNEL_INTEGRATION unset: the test is skipped with
//     a message naming `make integration` (a plain `go test ./...`).
//   - Variable unset, WINDTUNNEL_INTEGRATION=1: the test fails. The harness
//     meant to provide the server and did not.
//   - Variable set but the server unreachable: the test fails with the
//     address (password redacted) and the error.
//
// run.sh in this directory installs PostgreSQL and Redis from Debian packages
// if they are missing. It starts private instances on free loopback ports,
// exports the variables, runs a command and stops the servers.
package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// Environment variable names.
const (
	EnvPostgresURL = "WINDTUNNEL_PG_URL"
	EnvRedisAddr   = "WINDTUNNEL_REDIS_ADDR"
	EnvIntegration = "WINDTUNNEL_INTEGRATION"
)

// ReachTimeout bounds the reachability check of each server.
const ReachTimeout = 10 * time.Second

// Action is what a test does about one server.
type Action int

// The actions Decide returns.
const (
	Run  Action = iota // the variable is set: connect and run
	Skip               // not configured, not under the harness: skip
	Fail               // not configured under the harness: fail
)

// Decide returns what a test needing the server named by variable does,
// given the variable's value and WINDTUNNEL_INTEGRATION's, and the message
// to skip or fail with.
func Decide(variable, value, integration string) (Action, string) {
	if value != "" {
		return Run, ""
	}
	if integration == "1" {
		return Fail, fmt.Sprintf("%s=1 but %s is empty: the integration harness (impl/edge/testenv/run.sh) must set it", EnvIntegration, variable)
	}
	return Skip, fmt.Sprintf("integration test: %s is not set; run `make integration` (or set %s to your own server)", variable, variable)
}

func lookup(t testing.TB, variable string) string {
	t.Helper()
	value := os.Getenv(variable)
	switch action, msg := Decide(variable, value, os.Getenv(EnvIntegration)); action {
	case Skip:
		t.Skip(msg)
	case Fail:
		t.Fatal(msg)
	}
	return value
}

// PostgresURL returns WINDTUNNEL_PG_URL after checking that the server
// answers, or skips or fails the test as the package documentation says.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := lookup(t, EnvPostgresURL)
	ctx, cancel := context.WithTimeout(context.Background(), ReachTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, u)
	if err == nil {
		err = c.Ping(ctx)
		_ = c.Close(ctx)
	}
	if err != nil {
		t.Fatalf("PostgreSQL at %s (%s) is unreachable: %v\n(start servers with `make integration`, or point %s at a running server)",
			Redact(u), EnvPostgresURL, err, EnvPostgresURL)
	}
	return u
}

// RedisOptions returns client options for WINDTUNNEL_REDIS_ADDR after
// checking that the server answers, or skips or fails the test as the
// package documentation says. A value starting with redis:// or rediss://
// is parsed as a URL (for a password or database number); anything else is
// a host:port.
func RedisOptions(t testing.TB) *redis.Options {
	t.Helper()
	v := lookup(t, EnvRedisAddr)
	opts, err := ParseRedis(v)
	if err != nil {
		t.Fatalf("%s: %v", EnvRedisAddr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReachTimeout)
	defer cancel()
	c := redis.NewClient(opts)
	err = c.Ping(ctx).Err()
	_ = c.Close()
	if err != nil {
		t.Fatalf("Redis at %s (%s) is unreachable: %v\n(start servers with `make integration`, or point %s at a running server)",
			Redact(v), EnvRedisAddr, err, EnvRedisAddr)
	}
	return opts
}

// ParseRedis turns a WINDTUNNEL_REDIS_ADDR value into client options.
func ParseRedis(v string) (*redis.Options, error) {
	if strings.HasPrefix(v, "redis://") || strings.HasPrefix(v, "rediss://") {
		opts, err := redis.ParseURL(v)
		if err != nil {
			return nil, fmt.Errorf("bad Redis URL %s: %w", Redact(v), err)
		}
		return opts, nil
	}
	if !strings.Contains(v, ":") {
		return nil, fmt.Errorf("the Redis address %q is neither host:port nor a redis:// URL", v)
	}
	return &redis.Options{Addr: v}, nil
}

// Redact hides the password of a URL-form connection string, for messages.
// Keyword/value strings are reduced to their host and port keywords.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Redacted()
	}
	var keep []string
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, "host=") || strings.HasPrefix(f, "port=") {
			keep = append(keep, f)
		}
	}
	return "[" + strings.Join(keep, " ") + " ...]"
}

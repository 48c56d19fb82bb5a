package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	a, msg := Decide(EnvPostgresURL, "", "")
	assert.Equal(t, Skip, a)
	assert.Contains(t, msg, "make integration")
	assert.Contains(t, msg, EnvPostgresURL)

	a, msg = Decide(EnvRedisAddr, "", "1")
	assert.Equal(t, Fail, a, "under the harness a missing server fails")
	assert.Contains(t, msg, EnvRedisAddr)

	a, _ = Decide(EnvRedisAddr, "127.0.0.1:6379", "")
	assert.Equal(t, Run, a, "your own server, without the harness")
	a, _ = Decide(EnvRedisAddr, "127.0.0.1:6379", "1")
	assert.Equal(t, Run, a)
}

func TestRedact(t *testing.T) {
	assert.Equal(t, "postgres://relay:xxxxx@db:5432/buzz?sslmode=disable", Redact("postgres://relay:hunter2@db:5432/buzz?sslmode=disable"))
	assert.Equal(t, "redis://:xxxxx@cache:6379/0", Redact("redis://:hunter2@cache:6379/0"))
	got := Redact("host=db port=5432 password=hunter2 user=relay")
	assert.NotContains(t, got, "hunter2")
	assert.Contains(t, got, "host=db")
}

func TestParseRedis(t *testing.T) {
	o, err := ParseRedis("127.0.0.1:6380")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:6380", o.Addr)
	o, err = ParseRedis("redis://:pw@cache:6379/2")
	require.NoError(t, err)
	assert.Equal(t, "cache:6379", o.Addr)
	assert.Equal(t, "pw", o.Password)
	assert.Equal(t, 2, o.DB)
	_, err = ParseRedis("localhost")
	assert.Error(t, err)
	_, err = ParseRedis("redis://:pw@cache:6379/notanumber")
	assert.Error(t, err)
}

// The contract end to end: a test binary using PostgresURL and
// RedisOptions, run with each environment, skips or fails as documented
// and never passes. The servers named are unreachable ports.
func TestNeverPassesSilently(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		return // the child's work is in TestChildNeedsServers
	}
	for _, tc := range []struct {
		name    string
		env     []string
		outcome string
		says    []string
	}{
		{"plain go test", nil, "--- SKIP", []string{"make integration", EnvPostgresURL}},
		{"harness, variables missing", []string{EnvIntegration + "=1"}, "--- FAIL", []string{EnvPostgresURL + " is empty"}},
		{"harness, postgres down", []string{EnvIntegration + "=1", EnvPostgresURL + "=postgres://u:hunter2@127.0.0.1:1/x?sslmode=disable"},
			"--- FAIL", []string{"PostgreSQL at postgres://u:xxxxx@127.0.0.1:1/x", "unreachable"}},
		{"own servers, redis down", []string{EnvPostgresURL + "=postgres://u@127.0.0.1:1/x", EnvRedisAddr + "=127.0.0.1:1"},
			"--- FAIL", []string{"unreachable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsServers$", "-test.v", "-test.count=1")
			cmd.Env = append(cleanEnv(), "TESTENV_CHILD=1")
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			text := string(out)
			assert.Contains(t, text, tc.outcome, text)
			assert.NotContains(t, text, "--- PASS", text)
			for _, s := range tc.says {
				assert.Contains(t, text, s, text)
			}
			assert.NotContains(t, text, "hunter2", "passwords are redacted")
			if tc.outcome == "--- FAIL" {
				assert.Error(t, err, "a failed test must fail the binary")
			}
		})
	}
}

// TestChildNeedsServers is run by TestNeverPassesSilently in a child
// process; on its own (no TESTENV_CHILD) it does nothing.
func TestChildNeedsServers(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "1" {
		return
	}
	if os.Getenv(EnvPostgresURL) != "" && os.Getenv(EnvRedisAddr) != "" {
		RedisOptions(t) // exercise Redis first when both are named
	}
	PostgresURL(t)
	RedisOptions(t)
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "WINDTUNNEL_") || strings.HasPrefix(kv, "TESTENV_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

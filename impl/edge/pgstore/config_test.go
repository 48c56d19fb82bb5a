package pgstore

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no server.

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, max(DefaultMinMaxConns, runtime.GOMAXPROCS(0)), c.MaxConns)
	assert.Equal(t, DefaultIdlePing, c.IdlePing)
	assert.Equal(t, DefaultMaxIdle, c.MaxIdle)
	assert.Equal(t, DefaultConnectTimeout, c.ConnectTimeout)
	assert.Equal(t, DefaultMaxRows, c.MaxRows)
	// The membership cache's load asks for 16,385 rows (MS-4); the default
	// bound must let it.
	assert.Greater(t, c.MaxRows, 16385)
}

func TestConfigRejectsNonsense(t *testing.T) {
	for name, c := range map[string]Config{
		"negative conns":   {MaxConns: -1},
		"too many conns":   {MaxConns: math.MaxInt32 + 1},
		"negative idle":    {MaxIdle: -time.Second},
		"negative connect": {ConnectTimeout: -time.Second},
		"negative rows":    {MaxRows: -1},
		"schema upper":     {Schema: "Public"},
		"schema injection": {Schema: "x; DROP TABLE channels"},
		"schema digit":     {Schema: "1abc"},
		"schema too long":  {Schema: "a234567890123456789012345678901234567890123456789012345678901234"},
	} {
		_, err := c.withDefaults()
		assert.Error(t, err, name)
		_, err = Open(context.Background(), "postgres://127.0.0.1:1/x", c)
		assert.Error(t, err, name)
	}
	_, err := Config{Schema: "wt_ok_1"}.withDefaults()
	assert.NoError(t, err)
}

func TestOpenFailsClearlyWithoutServer(t *testing.T) {
	_, err := Open(context.Background(), "postgres://nobody@127.0.0.1:1/x?sslmode=disable", Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pgstore: connect to 127.0.0.1:1")

	_, err = Open(context.Background(), "postgres://user:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=nope", Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad connection string")
	assert.NotContains(t, err.Error(), "secret")

	// A blackholed address must not hang past the context's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Open(ctx, "postgres://nobody@10.255.255.1:5432/x?sslmode=disable", Config{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

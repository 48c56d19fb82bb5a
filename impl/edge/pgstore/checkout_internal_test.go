package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/edge/testenv"
)

// The server's own clock agrees: every statement on a connection starts
// after CheckedOutAt (MS-2 counts freshness from it). The server runs on
// the same machine under run.sh; 5 ms absorbs the two clocks' rounding.
func TestServerStatementStartsAfterCheckout(t *testing.T) {
	u := testenv.PostgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, u, Config{MaxConns: 1})
	require.NoError(t, err)
	defer s.Close()
	for range 5 {
		ac, err := s.Acquire(ctx)
		require.NoError(t, err)
		c := ac.(*conn)
		var started time.Time
		require.NoError(t, c.c.QueryRow(ctx, "SELECT statement_timestamp()").Scan(&started))
		assert.False(t, started.Before(c.CheckedOutAt().Add(-5*time.Millisecond)),
			"statement started at %v, before the checkout at %v", started, c.CheckedOutAt())
		c.Release()
	}
}

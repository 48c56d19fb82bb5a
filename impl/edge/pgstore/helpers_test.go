package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func sorted(ids []authz.ID) []authz.ID {
	out := slices.Clone(ids)
	slices.SortFunc(out, authz.Compare)
	if out == nil {
		out = []authz.ID{}
	}
	return out
}

func acquire(t *testing.T, ctx context.Context, p authz.Pool) authz.Conn {
	t.Helper()
	c, err := p.Acquire(ctx)
	require.NoError(t, err)
	return c
}

func ch(n uint64) authz.ID { return authz.NewID('c', n) }

package baseline_test

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model/baseline"
)

// The baseline reads every open channel on each reader's miss: three cold
// readers of a community with two open channels return six open rows.
func ExampleUnionCache() {
	ctx := context.Background()
	community := authz.NewID('k', 1)
	db := authztest.New(rt.Real())
	_ = db.AddChannel(authztest.Channel{ID: authz.NewID('c', 1), Community: community, Open: true, Listed: true})
	_ = db.AddChannel(authztest.Channel{ID: authz.NewID('c', 2), Community: community, Open: true, Listed: true})
	u, _ := baseline.NewUnionCache(rt.Real(), db, baseline.UnionConfig{})
	for r := uint64(1); r <= 3; r++ {
		_, _ = u.Accessible(ctx, community, authz.NewID('u', r))
	}
	fmt.Println("rows:", db.Stats().Rows, "misses:", u.Misses())
	// Output: rows: 6 misses: 3
}

package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// A relay's authorization caches on PostgreSQL. (Compiled, not run: it
// needs a server. The integration tests run the same wiring.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := pgstore.Open(ctx, os.Getenv("WINDTUNNEL_PG_URL"), pgstore.Config{MaxConns: 8})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.CreateSchema(ctx); err != nil { // a new database only
		log.Fatal(err)
	}

	open, err := accesschannels.New(rt.Real(), store, accesschannels.Config{}) // 1 s open-set age
	if err != nil {
		log.Fatal(err)
	}
	members, err := membership.New(rt.Real(), store, membership.Config{}) // 10 s from checkout
	if err != nil {
		log.Fatal(err)
	}
	community, user, channel := authz.NewID('k', 1), authz.NewID('u', 1), authz.NewID('c', 1)
	readable, _ := open.Granted(ctx, community, user, channel)
	writable, _ := members.IsMember(ctx, community, user, channel)
	fmt.Println(readable, writable)
	_ = store.Metrics().WriteText(os.Stdout) // pgstore_* counters
}

// Bad configuration is reported by Open, before any connection is made.
func ExampleOpen_badConfig() {
	_, err := pgstore.Open(context.Background(), "postgres://relay@db/buzz", pgstore.Config{Schema: "Relay Data"})
	fmt.Println(err)
	// Output:
	// pgstore: Schema "Relay Data" is not a plain lower-case identifier ([a-z_][a-z0-9_]*, at most 63 bytes)
}

// The SQL of each statement, for EXPLAIN or review.
func ExampleQuery() {
	sql, _ := pgstore.Query(pgstore.StmtListedOpenChannels)
	fmt.Println(sql)
	// Output:
	// SELECT id
	// FROM channels
	// WHERE community_id = $1
	//   AND visibility = 'open'
	//   AND listed
	//   AND deleted_at IS NULL
}

// Command relayd is one flight relay: the production authorization wiring
// on its own PostgreSQL pool and Redis subscription, answering the
// driver's requests on stdin and stdout (package flight's protocol). Logs
// go to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

func main() {
	var cfg flight.RelayConfig
	flag.StringVar(&cfg.PGURL, "pg", "", "PostgreSQL connection string (the relay's proxy)")
	flag.StringVar(&cfg.Schema, "schema", "", "the flight's schema")
	flag.IntVar(&cfg.MaxConns, "max-conns", 0, "pool size (0: pgstore's default)")
	flag.StringVar(&cfg.RedisAddr, "redis", "", "Redis host:port (the relay's proxy)")
	flag.StringVar(&cfg.Channel, "channel", "", "invalidation channel")
	flag.Parse()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := flight.Serve(ctx, cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "relayd:", err)
		os.Exit(1)
	}
}

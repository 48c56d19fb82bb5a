// Command flight flies the relays' production wiring on real PostgreSQL
// and Redis with faults between them (Toxiproxy), records every answer
// with its real instants and the database's commit log, and judges the
// history with the simulator's checkers (checks/) against the claims
// table's bounds, plus the measured clock and commit uncertainty. With
// -mutants it flies catalogue mutants too, each of which must be caught.
// Run it with make flight, which starts the servers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

func main() {
	o := Options{PGURL: os.Getenv("WINDTUNNEL_PG_URL"), RedisAddr: os.Getenv("WINDTUNNEL_REDIS_ADDR"), ToxiAddr: os.Getenv(flight.EnvToxiproxy)}
	flag.Uint64Var(&o.Seed, "seed", 1, "seed of the workload and fault schedule")
	flag.IntVar(&o.Relays, "relays", 2, "relay processes")
	flag.IntVar(&o.Rounds, "rounds", 4, "OC-2 race rounds (each races every revocation kind on one relay with its bus cut)")
	flag.IntVar(&o.Long, "long", 1, "10 s race rounds (OC-7, MS-2, MS-10 on one relay with its bus cut)")
	flag.DurationVar(&o.Churn, "churn", 10*time.Second, "the seeded churn's length: random reads and writes on every relay under a seeded fault schedule")
	flag.BoolVar(&o.MS3, "ms3", true, "fly MS-3's one-relay linearizability phase")
	flag.IntVar(&o.MaxConns, "max-conns", 0, "each relay's pool size (0: pgstore's default)")
	muts := flag.String("mutants", "", "comma-separated catalogue mutants to fly after the production flight; each must be caught")
	verbose := flag.Bool("v", false, "relays' logs to stderr")
	simOnly := flag.Bool("sim", false, "fly only the simulated side of the real-against-simulated table (no servers)")
	flag.Parse()
	if *simOnly {
		sf, err := simulate(o)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		comparison(os.Stdout, nil, sf)
		return
	}
	var logTo io.Writer
	if *verbose {
		logTo = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ok := true
	res, err := Run(ctx, o, logTo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flight:", err)
		os.Exit(2)
	}
	report(os.Stdout, res)
	if sf, err := simulate(o); err != nil {
		fmt.Println("real against simulated:", err)
	} else {
		comparison(os.Stdout, &res, sf)
	}
	ok = res.holds()
	for _, u := range res.untight() {
		fmt.Println("NOT TIGHT:", u)
		ok = false
	}
	for _, id := range strings.Split(*muts, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		mo, err := o.forMutant(id)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		mres, err := Run(ctx, mo, logTo)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flight:", id+":", err)
			os.Exit(2)
		}
		report(os.Stdout, mres)
		caught, line := mutantVerdict(id, mres)
		fmt.Println(line)
		ok = ok && caught
	}
	if !ok {
		os.Exit(1)
	}
}

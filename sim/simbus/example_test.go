package simbus_test

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// Two relays subscribe to invalidations; relay-b is partitioned away from
// +0.5s to +1.5s and loses what is published meanwhile. The records say
// exactly which message each relay missed, and why.
func Example() {
	got := map[string][]string{}
	var report []string
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		ctx := context.Background()
		bus, err := simbus.New[string](s, simbus.Config{})
		if err != nil {
			s.Failf("%v", err)
		}
		handler := func(who string) func(string) {
			return func(m string) { got[who] = append(got[who], fmt.Sprintf("+%v %s", s.Elapsed(), m)) }
		}
		a, _ := bus.Subscribe("relay-a", handler("relay-a"))
		partitioned := simbus.Faults{Partitions: []simbus.Window{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond}}}
		b, _ := bus.SubscribeWith("relay-b", partitioned, handler("relay-b"))
		for i, m := range []string{"drop user 1", "drop user 2", "drop user 3"} {
			_ = s.Sleep(ctx, time.Duration(i)*750*time.Millisecond)
			_ = bus.Publish(ctx, "writer", m)
		}
		_ = s.Sleep(ctx, time.Second)
		for _, sub := range []*simbus.Subscriber[string]{a, b} {
			for _, r := range sub.Records() {
				if r.Fate() == simbus.Lost {
					report = append(report, fmt.Sprintf("%s lost #%d %q sent at +%v: %v", sub.Name(), r.Seq, r.Msg, r.SentAt.Sub(sim.Epoch), r.Cause))
				}
			}
		}
		st := b.Stats()
		report = append(report, fmt.Sprintf("relay-b: sent %d, delivered %d, lost to partition %d", st.Sent, st.Delivered, st.Lost(simbus.CausePartition)))
	})
	if res.Err != nil {
		fmt.Println(res.Err)
	}
	fmt.Println("relay-a:", got["relay-a"])
	fmt.Println("relay-b:", got["relay-b"])
	for _, l := range report {
		fmt.Println(l)
	}
	// Output:
	// relay-a: [+0s drop user 1 +750ms drop user 2 +2.25s drop user 3]
	// relay-b: [+0s drop user 1 +2.25s drop user 3]
	// relay-b lost #2 "drop user 2" sent at +750ms: partition
	// relay-b: sent 3, delivered 2, lost to partition 1
}

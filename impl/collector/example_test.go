package collector_test

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func Example() {
	c, err := collector.New(rt.Real(), collector.Config{BucketWidth: time.Minute})
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	// Points may be recorded out of order.
	_ = c.Record("GetItem.latency_ms", t0.Add(61*time.Second), 7)
	_ = c.Record("GetItem.latency_ms", t0.Add(5*time.Second), 3)
	_ = c.Record("GetItem.latency_ms", t0.Add(2*time.Minute), 9) // younger than the cutoff: kept
	_ = c.Record("GetItem.latency_ms", t0.Add(10*time.Second), 5)

	buckets, st, err := c.Drain(context.Background(), t0.Add(2*time.Minute))
	if err != nil {
		panic(err)
	}
	for _, b := range buckets {
		fmt.Printf("%s %s count=%d sum=%g min=%g max=%g\n", b.Key, b.Start.Format("15:04"), b.Count, b.Sum, b.Min, b.Max)
	}
	fmt.Printf("drained=%d kept=%d write locks=%d moved under lock=%d\n", st.Drained, st.Kept, st.WriteLocks, st.MovedUnderLock)
	// Output:
	// GetItem.latency_ms 12:00 count=2 sum=8 min=3 max=5
	// GetItem.latency_ms 12:01 count=1 sum=7 min=7 max=7
	// drained=3 kept=1 write locks=2 moved under lock=0
}

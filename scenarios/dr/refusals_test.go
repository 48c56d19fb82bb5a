package dr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
)

// TestDR1_NewRefusesWhatItCannotRun holds collector.New to its contract
// before any drain: a missing runtime, a negative bucket width and a
// negative buffer bound are refused with ErrInvalid, never a panic or a
// collector that drains into nonsense; zeros take the defaults.
func TestDR1_NewRefusesWhatItCannotRun(t *testing.T) {
	type bad struct {
		r   rt.Runtime
		cfg collector.Config
	}
	cases := map[string]bad{
		"nil runtime":                {nil, collector.Config{}},
		"negative bucket width":      {rt.Real(), collector.Config{BucketWidth: -time.Second}},
		"negative MaxBufferedPoints": {rt.Real(), collector.Config{MaxBufferedPoints: -1}},
	}
	for what, c := range cases { //windtunnel:unordered each case alone
		col, err := collector.New(c.r, c.cfg)
		if !errors.Is(err, collector.ErrInvalid) || col != nil {
			t.Errorf("DR-1: collector.New with a %s = %v, %v; want ErrInvalid and no collector", what, col != nil, err)
		}
	}
	if _, err := collector.New(rt.Real(), collector.Config{}); err != nil {
		t.Errorf("DR-1: collector.New with the zero Config (every default): %v", err)
	}
}

// TestDR7_QueryRefusesBadRanges holds Query to its documented range: an
// instant outside [MinTime, MaxTime) at either end, or an empty range, is
// refused with ErrInvalid (the queries of the DR-7 worlds are all valid),
// and a range of one nanosecond around a recorded point returns it.
func TestDR7_QueryRefusesBadRanges(t *testing.T) {
	c, err := collector.New(rt.Real(), collector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	if err := c.Record("k", at, 1); err != nil {
		t.Fatal(err)
	}
	for what, r := range map[string][2]time.Time{ //windtunnel:unordered each case alone
		"empty range":              {at, at},
		"reversed range":           {at.Add(time.Second), at},
		"from before MinTime":      {collector.MinTime.Add(-time.Nanosecond), at},
		"to at MaxTime (excluded)": {at, collector.MaxTime},
	} {
		if pts, err := c.Query("k", r[0], r[1]); !errors.Is(err, collector.ErrInvalid) {
			t.Errorf("DR-7: Query over a %s returned %d points and %v; want ErrInvalid", what, len(pts), err)
		}
	}
	pts, err := c.Query("k", at, at.Add(time.Nanosecond))
	if err != nil || len(pts) != 1 {
		t.Errorf("DR-7: Query over [at, at+1ns) returned %d points and %v; want the one point", len(pts), err)
	}
}

// TestDR1_FullBufferRefusesExactlyPastItsBound: a collector bounded to N
// buffered points takes N and refuses the next with ErrFull; a drain that
// takes them makes room again.
func TestDR1_FullBufferRefusesExactlyPastItsBound(t *testing.T) {
	const bound = 10
	c, err := collector.New(rt.Real(), collector.Config{MaxBufferedPoints: bound})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for i := range bound {
		if err := c.Record("k", at.Add(time.Duration(i)), 1); err != nil {
			t.Fatalf("DR-1: record %d of a buffer of %d: %v", i+1, bound, err)
		}
	}
	if err := c.Record("k", at.Add(bound), 1); !errors.Is(err, collector.ErrFull) {
		t.Errorf("DR-1: record %d into a buffer of %d: %v; want ErrFull", bound+1, bound, err)
	}
	if _, _, err := c.DrainPoints(context.Background(), at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := c.Record("k", at.Add(2*time.Hour), 1); err != nil {
		t.Errorf("DR-1: a record after the drain emptied the buffer: %v", err)
	}
}

// TestDR1_DefaultBufferHoldsTheSeedsLoad: a collector with the zero
// Config buffers the seed's load without refusing a point. The seed text
// buffers "about 120 s" of points between flushes at up to 38,000
// requests/s, 7 points per request: 31.92 million points, about 0.5 GB.
// A default below that refuses points at the seed's own peak, and every
// drain then misses them (DR-1). Skipped with -short (the race lane).
func TestDR1_DefaultBufferHoldsTheSeedsLoad(t *testing.T) {
	const (
		requestsPerSecond = 38_000
		pointsPerRequest  = 7
		buffered          = 120 * time.Second
		points            = requestsPerSecond * pointsPerRequest * int(buffered/time.Second)
	)
	if testing.Short() {
		t.Skipf("DR-1: recording %d points takes about 0.5 GB", points)
	}
	c, err := collector.New(rt.Real(), collector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, pointsPerRequest)
	for i := range keys {
		keys[i] = fmt.Sprintf("getitem.%d", i)
	}
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for i := range points {
		// One request's points share its instant; requests are 1/38,000 s apart.
		ts := at.Add(time.Duration(i/pointsPerRequest) * time.Second / requestsPerSecond)
		if err := c.Record(keys[i%pointsPerRequest], ts, 1); err != nil {
			t.Fatalf("DR-1: point %d of the seed's %d (%d requests/s x %d points x %v), default buffer: %v",
				i+1, points, requestsPerSecond, pointsPerRequest, buffered, err)
		}
	}
	if got := c.Len(); got != int64(points) {
		t.Errorf("DR-1: %d points buffered after %d records, each answered nil", got, points)
	}
}

// TestDR9_FlushFuncRefusesWhatItCannotFlush holds the flush cycle to its
// documented inputs: a negative lag is refused with ErrInvalid; a lag of 0 is a flush up to now; a
// nil sink drains and stores nothing.
func TestDR9_FlushFuncRefusesWhatItCannotFlush(t *testing.T) {
	c, err := collector.New(rt.Real(), collector.Config{BucketWidth: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.FlushFunc(-time.Second, nil)(ctx); !errors.Is(err, collector.ErrInvalid) {
		t.Errorf("DR-9: a flush with a negative lag: %v; want ErrInvalid", err)
	}
	hourAgo := rt.Real().Now().Add(-time.Hour)
	if err := c.Record("k", hourAgo, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushFunc(0, nil)(ctx); err != nil {
		t.Errorf("DR-9: a flush with lag 0 and no sink: %v", err)
	}
	if n := c.Len(); n != 0 {
		t.Errorf("DR-9: a flush up to now left %d points of an hour ago buffered", n)
	}
	stored := 0
	if err := c.Record("k", hourAgo, 1); err != nil {
		t.Fatal(err)
	}
	err = c.FlushFunc(0, func(_ context.Context, bs []collector.Bucket) error { stored += len(bs); return nil })(ctx)
	if err != nil || stored != 1 {
		t.Errorf("DR-9: a flush with a sink stored %d buckets (%v); want the one", stored, err)
	}
}

// TestDR10_PruneKeepsTheBufferedGaugeExact: after a prune, the buffered
// points gauge reads the points left, as a scrape sees it, before any
// other operation could set it again.
func TestDR10_PruneKeepsTheBufferedGaugeExact(t *testing.T) {
	var reg stats.Registry
	c, err := collector.New(rt.Real(), collector.Config{Registry: &reg})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		if err := c.Record("k", at.Add(time.Duration(i)*time.Second), 1); err != nil {
			t.Fatal(err)
		}
	}
	pruned, err := c.Prune(at.Add(3 * time.Second))
	if err != nil || pruned != 3 {
		t.Fatalf("DR-10: a prune at +3s of points at +0..4s pruned %d (%v); want 3", pruned, err)
	}
	got, err := series.Scrape(&reg, collector.MetricBuffered)
	if err != nil {
		t.Fatal(err)
	}
	if got[collector.MetricBuffered] != 2 {
		t.Errorf("DR-10: after the prune %s reads %d; want the 2 points left", collector.MetricBuffered, got[collector.MetricBuffered])
	}
}

package collector

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// Defaults, from the seed: the flush runs once a minute and buffers about
// 120 s of points; 38,000 requests/s at 7 points each for 120 s is about
// 32 million points.
const (
	DefaultBucketWidth       = time.Minute
	DefaultMaxBufferedPoints = 1 << 25
)

// Errors returned by the collector. Test them with errors.Is.
var (
	// ErrInvalid reports a bad argument: an empty key, a NaN value, a
	// timestamp outside [MinTime, MaxTime), or an empty range.
	ErrInvalid = errors.New("collector: invalid argument")
	// ErrFull reports that MaxBufferedPoints points are buffered; the point
	// was dropped and counted.
	ErrFull = errors.New("collector: buffer full")
)

// MinTime and MaxTime bound the timestamps and cutoffs the collector
// accepts. Inside them a time converts to Unix nanoseconds and to its bucket
// start without overflow.
var (
	MinTime = time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Config configures a Collector. The zero value gives the defaults.
type Config struct {
	// BucketWidth is the span of one flush bucket. Zero means
	// DefaultBucketWidth; a negative width is an error.
	BucketWidth time.Duration
	// MaxBufferedPoints bounds the buffered points, including those held by
	// a drain in progress. Zero means DefaultMaxBufferedPoints.
	MaxBufferedPoints int64
	// Registry, if not nil, receives the collector's metrics.
	Registry *stats.Registry
}

// Collector buffers metric points per key and hands them out by age. It is
// safe for concurrent use. See the package documentation for the locking.
type Collector struct {
	rt          rt.Runtime
	width       int64
	maxBuffered int64

	// data guards series, buffered and inFlight. Record and Prune take it
	// for writing, Query and Snapshot for reading; a drain takes it twice,
	// each time only to swap a map (DR-2).
	data     rt.RWMutex
	series   map[string]*series
	buffered int64 // points in series plus inFlight
	inFlight int64 // points a drain has swapped out and not yet put back

	// drainMu serializes the swap, split and put-back of drains (DR-4).
	// Record, Query and Prune never take it.
	drainMu rt.Mutex

	// pointsMoved counts every point the drain path relinks or copies. The
	// drain reads it at its lock boundary (writeLocked) to count the points
	// moved while it held the write lock (DR-2).
	pointsMoved stats.Counter

	m metrics
}

// New returns an empty Collector running on r.
func New(r rt.Runtime, cfg Config) (*Collector, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil runtime", ErrInvalid)
	}
	if cfg.BucketWidth < 0 {
		return nil, fmt.Errorf("%w: negative bucket width %v", ErrInvalid, cfg.BucketWidth)
	}
	if cfg.MaxBufferedPoints < 0 {
		return nil, fmt.Errorf("%w: negative MaxBufferedPoints %d", ErrInvalid, cfg.MaxBufferedPoints)
	}
	c := &Collector{
		rt:          r,
		width:       int64(cmp.Or(cfg.BucketWidth, DefaultBucketWidth)),
		maxBuffered: cmp.Or(cfg.MaxBufferedPoints, DefaultMaxBufferedPoints),
		data:        r.NewRWMutex("collector.data"),
		drainMu:     r.NewMutex("collector.drain"),
		series:      make(map[string]*series),
		m:           newMetrics(),
	}
	if cfg.Registry != nil {
		c.m.register(cfg.Registry)
	}
	return c, nil
}

// toTS converts t to Unix nanoseconds, rejecting times outside
// [MinTime, MaxTime).
func toTS(t time.Time) (int64, error) {
	if t.Before(MinTime) || !t.Before(MaxTime) {
		return 0, fmt.Errorf("%w: time %v outside [%v, %v)", ErrInvalid, t, MinTime, MaxTime)
	}
	return t.UnixNano(), nil
}

// Record buffers value for key at instant ts. It holds the write lock for
// one append, which reallocates at most one chunk (DR-6), however many
// points are buffered.
func (c *Collector) Record(key string, ts time.Time, value float64) error {
	t, err := toTS(ts)
	switch {
	case err != nil:
	case key == "":
		err = fmt.Errorf("%w: empty key", ErrInvalid)
	case math.IsNaN(value):
		err = fmt.Errorf("%w: NaN value for key %q", ErrInvalid, key)
	}
	if err != nil {
		c.m.rejected.With("invalid").Inc()
		return err
	}
	c.data.Lock()
	defer c.data.Unlock()
	if c.buffered >= c.maxBuffered {
		c.m.rejected.With("full").Inc()
		return fmt.Errorf("%w: %d points buffered", ErrFull, c.buffered)
	}
	s := c.series[key]
	if s == nil {
		s = &series{}
		c.series[key] = s
	}
	s.add(Point{TS: t, Value: value})
	c.buffered++
	c.m.buffered.Set(c.buffered)
	c.m.recorded.Inc()
	return nil
}

// Query returns the buffered points of key with from <= TS < to, in
// recorded order, under the read lock.
//
// Documented deviation (DR-7, as in the seed): while a drain is between its
// two swaps, the points it swapped out are visible to nobody, so a query
// then returns only the points recorded since the swap. Serve durable
// metrics from the store the flush writes to, not from here.
func (c *Collector) Query(key string, from, to time.Time) ([]Point, error) {
	lo, err := toTS(from)
	if err != nil {
		return nil, err
	}
	hi, err := toTS(to)
	if err != nil {
		return nil, err
	}
	if hi <= lo {
		return nil, fmt.Errorf("%w: empty range [%v, %v)", ErrInvalid, from, to)
	}
	c.data.RLock()
	defer c.data.RUnlock()
	s := c.series[key]
	if s == nil {
		return nil, nil
	}
	return s.appendRange(nil, lo, hi), nil
}

// Snapshot returns every buffered point, grouped by key in key order, each
// key's points in recorded order. Like Query, it does not see the points of
// a drain in progress.
func (c *Collector) Snapshot() []Batch {
	c.data.RLock()
	defer c.data.RUnlock()
	keys := sortedKeys(c.series)
	out := make([]Batch, 0, len(keys))
	for _, k := range keys {
		s := c.series[k]
		out = append(out, Batch{Key: k, Points: s.appendTo(make([]Point, 0, s.points))})
	}
	return out
}

// Len returns the number of buffered points, including those held by a
// drain in progress.
func (c *Collector) Len() int64 {
	c.data.RLock()
	defer c.data.RUnlock()
	return c.buffered
}

// Prune discards the buffered points older than cutoff (TS < cutoff, the
// drain's rule) and returns how many it discarded. It holds the write lock
// for a pass over chunks, not points: it uses the drain's split, so only
// chunks straddling the cutoff are copied. Points held by a drain in
// progress are not pruned.
func (c *Collector) Prune(cutoff time.Time) (int64, error) {
	cut, err := toTS(cutoff)
	if err != nil {
		return 0, err
	}
	c.data.Lock()
	defer c.data.Unlock()
	var pruned int64
	// Deleting the current key while ranging is allowed.
	//windtunnel:unordered each key is split on its own, with no scheduling point
	for key, s := range c.series {
		d, k, _ := s.split(cut)
		pruned += d.points
		if k.points == 0 {
			delete(c.series, key)
		} else {
			*s = k
		}
	}
	c.buffered -= pruned
	c.m.buffered.Set(c.buffered)
	c.m.pruned.Add(pruned)
	return pruned, nil
}

// CheckInvariants verifies, under the read lock, the structure of every
// buffered key (DR-6): chunks of 1..ChunkPoints points with exact bounds,
// consistent counts. It is an audit for tests and debugging, linear in the
// number of chunks.
func (c *Collector) CheckInvariants() error {
	c.data.RLock()
	defer c.data.RUnlock()
	var total int64
	for _, k := range sortedKeys(c.series) {
		s := c.series[k]
		if err := s.check(); err != nil {
			return fmt.Errorf("collector: key %q: %w", k, err)
		}
		if s.points == 0 {
			return fmt.Errorf("collector: key %q is buffered with no points", k)
		}
		total += s.points
	}
	if total != c.buffered-c.inFlight {
		return fmt.Errorf("collector: %d points in series, counters say %d buffered - %d in flight", total, c.buffered, c.inFlight)
	}
	return nil
}

func sortedKeys(m map[string]*series) []string {
	keys := make([]string, 0, len(m))
	//windtunnel:unordered the keys are sorted below
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Package stats holds the counters and gauges that impl packages export.
//
// It exists so that every mechanism can publish the metric names of its
// change description (for example open_channels_cache_misses_total with
// reason="absent"|"expired") in one way. That way is exact in tests and
// usable in a service. Values are atomics: safe under real goroutines, and
// deterministic under the simulator, which runs one task at a time. Label
// values are fixed when the metric is created, so a typo is a panic at
// construction, not a silently new series. The text exposition is in the
// Prometheus format, sorted, so two identical runs print identical text.
package stats

// Counters are written by the code under test and read by exporters and
// checks. No task ever waits on one, so their atomics synchronise nothing the
// simulator's scheduler would need to see.
//
//windtunnel:allow sync/atomic counters and gauges only; nothing waits on them

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
)

// Counter is a monotonically increasing count.
type Counter struct{ v atomic.Int64 }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Add adds n, which must not be negative.
func (c *Counter) Add(n int64) {
	if n < 0 {
		panic(fmt.Sprintf("stats: counter decreased by %d", n))
	}
	c.v.Add(n)
}

// Value returns the current count.
func (c *Counter) Value() int64 { return c.v.Load() }

// Gauge is a value that can go up and down, or be set to a maximum.
type Gauge struct{ v atomic.Int64 }

// Set replaces the value.
func (g *Gauge) Set(n int64) { g.v.Store(n) }

// Add adds n (which may be negative).
func (g *Gauge) Add(n int64) { g.v.Add(n) }

// SetMax raises the value to n if n is larger.
func (g *Gauge) SetMax(n int64) {
	for {
		old := g.v.Load()
		if n <= old || g.v.CompareAndSwap(old, n) {
			return
		}
	}
}

// Value returns the current value.
func (g *Gauge) Value() int64 { return g.v.Load() }

// CounterVec is a family of counters with one label whose values are fixed at
// creation, such as reason="absent"|"expired".
type CounterVec struct {
	label  string
	values []string
	counts []Counter
}

// NewCounterVec returns a family with the given label and values.
// It panics on an empty label, no values or a duplicated value: those are
// programming errors in a metric definition.
func NewCounterVec(label string, values ...string) *CounterVec {
	if label == "" || len(values) == 0 {
		panic("stats: a CounterVec needs a label and at least one value")
	}
	for i, v := range values {
		if slices.Contains(values[:i], v) {
			panic(fmt.Sprintf("stats: duplicate label value %q", v))
		}
	}
	return &CounterVec{label: label, values: slices.Clone(values), counts: make([]Counter, len(values))}
}

// With returns the counter for one label value. An unknown value panics.
func (v *CounterVec) With(value string) *Counter {
	for i, x := range v.values {
		if x == value {
			return &v.counts[i]
		}
	}
	panic(fmt.Sprintf("stats: %s=%q is not a declared label value (have %v)", v.label, value, v.values))
}

// Registry names metrics for exposition. Registration order does not matter:
// output is sorted by name.
type Registry struct {
	entries []entry
}

type entry struct {
	name, help string
	counter    *Counter
	gauge      *Gauge
	vec        *CounterVec
}

func (r *Registry) add(e entry) {
	if e.name == "" || strings.ContainsAny(e.name, " {}\"") {
		panic(fmt.Sprintf("stats: invalid metric name %q", e.name))
	}
	for _, x := range r.entries {
		if x.name == e.name {
			panic(fmt.Sprintf("stats: metric %q registered twice", e.name))
		}
	}
	r.entries = append(r.entries, e)
}

// Counter registers c under name.
func (r *Registry) Counter(name, help string, c *Counter) {
	r.add(entry{name: name, help: help, counter: c})
}

// Gauge registers g under name.
func (r *Registry) Gauge(name, help string, g *Gauge) { r.add(entry{name: name, help: help, gauge: g}) }

// CounterVec registers v under name.
func (r *Registry) CounterVec(name, help string, v *CounterVec) {
	r.add(entry{name: name, help: help, vec: v})
}

// Snapshot returns every series as "name" or `name{label="value"}` mapped to
// its current value. Tests compare it with the events they observed.
func (r *Registry) Snapshot() map[string]int64 {
	out := make(map[string]int64)
	for _, e := range r.entries {
		switch {
		case e.counter != nil:
			out[e.name] = e.counter.Value()
		case e.gauge != nil:
			out[e.name] = e.gauge.Value()
		default:
			for i, val := range e.vec.values {
				out[fmt.Sprintf("%s{%s=%q}", e.name, e.vec.label, val)] = e.vec.counts[i].Value()
			}
		}
	}
	return out
}

// WriteText writes every metric in the Prometheus text exposition format,
// sorted by name. Counters are typed counter and gauges gauge.
func (r *Registry) WriteText(w io.Writer) error {
	es := slices.Clone(r.entries)
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, e := range es {
		typ := "counter"
		if e.gauge != nil {
			typ = "gauge"
		}
		if e.help != "" {
			fmt.Fprintf(&b, "# HELP %s %s\n", e.name, e.help)
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", e.name, typ)
		switch {
		case e.counter != nil:
			fmt.Fprintf(&b, "%s %d\n", e.name, e.counter.Value())
		case e.gauge != nil:
			fmt.Fprintf(&b, "%s %d\n", e.name, e.gauge.Value())
		default:
			for i, val := range e.vec.values {
				fmt.Fprintf(&b, "%s{%s=%q} %d\n", e.name, e.vec.label, val, e.vec.counts[i].Value())
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Package series holds the Prometheus series the source texts name (Table)
// and reads an exporter as a Prometheus server does (Scrape), so a metric
// claim is judged on the series a dashboard reads.
package series

import (
	"fmt"
	"strings"
)

// Metric is one series a source text names: the name (without the
// deployment's namespace prefix, "buzz_" in the relay, which its exporter
// adds) and its label, if any.
type Metric struct {
	Claim string
	Name  string // open_channels_cache_misses_total
	Label string // reason, or ""
	Value string // "expired", or ""
	// Kind is the Prometheus type the series must be exported as. It is
	// "counter" for a count that only grows (every _total, and TW-8's
	// passes, visited, fired, pass time and exhausted budgets, which the
	// seed lists beside them as running totals). It is "gauge" for a
	// figure that is not a running total (TW-8's longest pass: a rate()
	// over it means nothing).
	Kind string
}

// Series is the metric as a stats.Registry snapshot keys it:
// name{label="value"}.
func (m Metric) Series() string {
	if m.Label == "" {
		return m.Name
	}
	return fmt.Sprintf("%s{%s=%q}", m.Name, m.Label, m.Value)
}

// Table is every series the source texts name.
var Table = []Metric{
	{"OC-9", "open_channels_cache_hits_total", "", "", "counter"},
	{"OC-9", "open_channels_cache_misses_total", "reason", "absent", "counter"},
	{"OC-9", "open_channels_cache_misses_total", "reason", "expired", "counter"},
	{"OC-9", "accessible_channels_cache_hits_total", "", "", "counter"},
	{"OC-9", "accessible_channels_cache_misses_total", "", "", "counter"},
	{"MS-6", "membership_cache_fallbacks_total", "reason", "wait_timeout", "counter"},
	{"MS-4", "membership_cache_fallbacks_total", "reason", "oversize", "counter"},
	{"MS-1", "membership_cache_hits_total", "", "", "counter"},
	{"MS-1", "membership_cache_misses_total", "", "", "counter"},
	{"TW-8", "inactivity_cop_passes", "", "", "counter"},
	{"TW-8", "inactivity_cop_visited", "", "", "counter"},
	{"TW-8", "inactivity_cop_fired", "", "", "counter"},
	{"TW-8", "inactivity_cop_pass_time_us", "", "", "counter"},
	{"TW-8", "inactivity_cop_pass_max_us", "", "", "gauge"},
	{"TW-8", "inactivity_cop_budget_exhausted", "", "", "counter"},
	{"DR-9", "worker_errors_total", "worker", "metrics_flush", "counter"},
}

// Named returns the metrics whose name starts with prefix.
func Named(prefix string) []Metric {
	var out []Metric
	for _, m := range Table {
		if strings.HasPrefix(m.Name, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// Of returns the series of the metrics whose name starts with prefix
// ("open_channels_cache", "membership_cache", "inactivity_cop").
func Of(prefix string) []string {
	var out []string
	for _, m := range Named(prefix) {
		out = append(out, m.Series())
	}
	return out
}

package series

import (
	"fmt"

	"github.com/windtunnel/windtunnel/checks"
)

// Scrape reads e as a Prometheus server does (checks.Scrape: its text
// exposition through the Prometheus parser) and returns every series'
// value, keyed as Metric.Series names them. It fails when a series the
// source texts name under prefix (Named) is missing or exported with
// another type than the table's Kind: a metric claim is about the series a
// dashboard reads, and a checker that read the registry's own snapshot
// instead passed an exposition no scraper could parse.
func Scrape(e checks.Exporter, prefix string) (map[string]int64, error) {
	sc, err := checks.Scrape(e)
	if err != nil {
		return nil, err
	}
	for _, m := range Named(prefix) {
		if _, ok := sc.Values[m.Series()]; !ok {
			return nil, fmt.Errorf("%s: the exposition has no series %s", m.Claim, m.Series())
		}
		if got := sc.Types[m.Name]; got != m.Kind {
			return nil, fmt.Errorf("%s: %s is exported as a %s, the source text's series is a %s", m.Claim, m.Name, got, m.Kind)
		}
	}
	return sc.Values, nil
}

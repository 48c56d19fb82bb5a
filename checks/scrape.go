package checks

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Exporter is what a metrics registry offers a scraper: its Prometheus text
// exposition (impl/stats.Registry).
type Exporter interface {
	WriteText(w io.Writer) error
}

// Scraped is a registry as a Prometheus server reads it.
type Scraped struct {
	// Values is every sample, keyed name or name{label="value"} (one label
	// at most: the registries export no more), as series.Metric.Series
	// names a series.
	Values map[string]int64
	// Types is every family's declared type, "counter" or "gauge".
	Types map[string]string
}

// Scrape reads e the way a Prometheus server does: through its text
// exposition, parsed by the Prometheus text parser, not through the
// registry's own view of itself. A dashboard sees the exposition, and the
// metric claims are about what it sees. So a metric the checks count right
// but the exposition prints wrong matters: an unquoted label value, a gauge
// typed as a counter, a sample of no declared family. Scrape fails on text
// the parser refuses and on a family with a sample of more than one label. It
// fails on a value that is not a whole number, because every series the
// claims name counts or measures in whole units.
func Scrape(e Exporter) (Scraped, error) {
	var text bytes.Buffer
	if err := e.WriteText(&text); err != nil {
		return Scraped{}, fmt.Errorf("scrape: writing the exposition: %w", err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text.Bytes()))
	if err != nil {
		return Scraped{}, fmt.Errorf("scrape: the exposition is not Prometheus text: %w\n%s", err, text.String())
	}
	out := Scraped{Values: map[string]int64{}, Types: map[string]string{}}
	for name, f := range fams { //windtunnel:unordered each family fills its own keys
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			out.Types[name] = "counter"
		case dto.MetricType_GAUGE:
			out.Types[name] = "gauge"
		default:
			out.Types[name] = strings.ToLower(f.GetType().String())
		}
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			default:
				v = m.GetUntyped().GetValue()
			}
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return Scraped{}, fmt.Errorf("scrape: %s has the value %v, not a whole number", name, v)
			}
			key := name
			switch labels := m.GetLabel(); len(labels) {
			case 0:
			case 1:
				key = fmt.Sprintf("%s{%s=%q}", name, labels[0].GetName(), labels[0].GetValue())
			default:
				return Scraped{}, fmt.Errorf("scrape: %s has a sample of %d labels, the checks read one at most", name, len(labels))
			}
			if _, dup := out.Values[key]; dup {
				return Scraped{}, fmt.Errorf("scrape: the series %s appears twice", key)
			}
			out.Values[key] = int64(v)
		}
	}
	return out, nil
}

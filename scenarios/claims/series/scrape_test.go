package series

import (
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// text is an exporter of a fixed exposition.
type text string

func (t text) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, string(t))
	return err
}

// TestScrapeReadsWhatAScraperReads: the exposition of the TW-8 series is
// read through the Prometheus parser, and each kind of exposition no
// dashboard could use fails: an unquoted label value, a gauge typed as a
// counter, a named series left out, a fractional count.
func TestScrapeReadsWhatAScraperReads(t *testing.T) {
	good := ""
	for _, m := range Named("inactivity_cop") {
		good += fmt.Sprintf("# TYPE %s %s\n%s 7\n", m.Name, m.Kind, m.Name)
	}
	got, err := Scrape(text(good), "inactivity_cop")
	require.NoError(t, err)
	assert.Equal(t, int64(7), got["inactivity_cop_pass_max_us"])

	labelled := "# TYPE worker_errors_total counter\nworker_errors_total{worker=\"metrics_flush\"} 3\n"
	got, err = Scrape(text(labelled), "worker_errors")
	require.NoError(t, err)
	assert.Equal(t, int64(3), got[`worker_errors_total{worker="metrics_flush"}`])

	for name, bad := range map[string]string{ //windtunnel:unordered each case on its own
		"unquoted label": "# TYPE worker_errors_total counter\nworker_errors_total{worker=metrics_flush} 3\n",
		"wrong type":     "# TYPE worker_errors_total gauge\nworker_errors_total{worker=\"metrics_flush\"} 3\n",
		"missing series": "# TYPE worker_errors_total counter\nworker_errors_total{worker=\"other\"} 3\n",
		"fraction":       "# TYPE worker_errors_total counter\nworker_errors_total{worker=\"metrics_flush\"} 2.5\n",
	} {
		_, err := Scrape(text(bad), "worker_errors")
		assert.Error(t, err, name)
	}
}

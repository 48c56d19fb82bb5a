package dr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// TestDR9_ExpositionOfEveryOperation checks the registry every metric
// claim reads its series through (DR-9's worker errors here, OC-9's and
// TW-8's in their families). Every operation on a counter, a gauge and a
// labelled family, drawn at random, must show in the scrape exactly as a
// plain model of the operations says, typed as registered. Every mistake in
// a metric definition must panic when it is made: a second metric under a
// name, a name no scraper can read, a family with no label or no value or
// a value twice, an undeclared label value, a counter decreased. A metric
// defined wrongly would otherwise be a series no check can trust: a
// duplicate that a scrape sums or drops, a counter that went down.
func TestDR9_ExpositionOfEveryOperation(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 9))
		var reg stats.Registry
		var cs [2]stats.Counter
		var gs [2]stats.Gauge
		vec := stats.NewCounterVec("reason", "absent", "expired")
		for i := range cs {
			reg.Counter(fmt.Sprintf("c%d_total", i), "a counter", &cs[i])
			reg.Gauge(fmt.Sprintf("g%d", i), "a gauge", &gs[i])
		}
		reg.CounterVec("v_total", "a family", vec)
		want := map[string]int64{}
		for i := range cs {
			want[fmt.Sprintf("c%d_total", i)], want[fmt.Sprintf("g%d", i)] = 0, 0
		}
		want[`v_total{reason="absent"}`], want[`v_total{reason="expired"}`] = 0, 0
		for step := range 200 {
			i := r.IntN(2)
			c, g := fmt.Sprintf("c%d_total", i), fmt.Sprintf("g%d", i)
			switch n := r.Int64N(50) - 10; r.IntN(6) {
			case 0:
				cs[i].Inc()
				want[c]++
			case 1:
				cs[i].Add(max(n, 0))
				want[c] += max(n, 0)
			case 2:
				gs[i].Set(n)
				want[g] = n
			case 3:
				gs[i].Add(n)
				want[g] += n
			case 4:
				gs[i].SetMax(n)
				want[g] = max(want[g], n)
			case 5:
				v := []string{"absent", "expired"}[r.IntN(2)]
				vec.With(v).Inc()
				want[`v_total{reason="`+v+`"}`]++
			}
			if step%20 != 19 {
				continue
			}
			sc, err := checks.Scrape(&reg)
			if err != nil {
				t.Fatalf("DR-9: seed %d step %d: %v", seed, step, err)
			}
			if len(sc.Values) != len(want) {
				t.Fatalf("DR-9: seed %d step %d: the scrape has %d series, the model %d: %v", seed, step, len(sc.Values), len(want), sc.Values)
			}
			for name, v := range want { //windtunnel:unordered each series is compared on its own
				if sc.Values[name] != v {
					t.Fatalf("DR-9: seed %d step %d: %s scrapes as %d, the operations make it %d", seed, step, name, sc.Values[name], v)
				}
			}
			snap := reg.Snapshot()
			for name, v := range want { //windtunnel:unordered each series is compared on its own
				if got, ok := snap[name]; !ok || got != v {
					t.Fatalf("DR-9: seed %d step %d: the registry's snapshot has %s = %d (present %v), the operations make it %d", seed, step, name, got, ok, v)
				}
			}
			for name, typ := range map[string]string{"c0_total": "counter", "g0": "gauge", "v_total": "counter"} { //windtunnel:unordered each type on its own
				if sc.Types[name] != typ {
					t.Fatalf("DR-9: %s is exported as a %q, registered as a %s", name, sc.Types[name], typ)
				}
			}
		}
	}

	var reg stats.Registry
	var c stats.Counter
	reg.Counter("taken_total", "", &c)
	reg.Gauge("helped", "What it measures.", &stats.Gauge{})
	var text strings.Builder
	if err := reg.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text.String()))
	if err != nil {
		t.Fatalf("DR-9: the exposition does not parse: %v\n%s", err, text.String())
	}
	if got := fams["helped"].GetHelp(); got != "What it measures." {
		t.Errorf("DR-9: the exposition gives helped the help %q, registered with %q:\n%s", got, "What it measures.", text.String())
	}
	if strings.Contains(text.String(), "# HELP taken_total") {
		t.Errorf("DR-9: a metric registered without help has a HELP line:\n%s", text.String())
	}
	vec := stats.NewCounterVec("worker", "metrics_flush")
	mistakes := map[string]func(){
		"a second metric under a name": func() { reg.Gauge("taken_total", "", &stats.Gauge{}) },
		"an empty name":                func() { reg.Counter("", "", &stats.Counter{}) },
		"a name with a space":          func() { reg.Counter("a b", "", &stats.Counter{}) },
		"a name with braces":           func() { reg.Counter("a{b}", "", &stats.Counter{}) },
		"a name with a quote":          func() { reg.Counter(`a"b`, "", &stats.Counter{}) },
		"a family with no label":       func() { stats.NewCounterVec("", "x") },
		"a family with no value":       func() { stats.NewCounterVec("reason") },
		"a family with a value twice":  func() { stats.NewCounterVec("reason", "x", "x") },
		"an undeclared label value":    func() { vec.With("metrics_flushh") },
		"a counter decreased":          func() { c.Add(-1) },
	}
	for what, f := range mistakes { //windtunnel:unordered each mistake on its own
		if !panics(f) {
			t.Errorf("DR-9: %s did not panic: a metric defined wrongly must fail where it is defined", what)
		}
	}
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

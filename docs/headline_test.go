package docs_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeHeadlineIsTheBenchmarksTable holds the README's first section
// to the bug benchmark's summary table in docs/bugbench.md: the strategy
// named is the one with the lowest median time to the first catch, the two
// times are that median and the better peer's, and the ratio is theirs,
// rounded down, whichever way it goes. A new table with the old sentence fails.
func TestReadmeHeadlineIsTheBenchmarksTable(t *testing.T) {
	readme := readFile(t, "README.md")
	bench := readFile(t, filepath.Join("docs", "bugbench.md"))
	medians := summaryMedians(t, bench)
	best := ""
	for _, s := range []string{"random", "pct", "pos", "surw"} {
		if d, ok := medians[s]; ok && (best == "" || d < medians[best]) {
			best = s
		}
	}
	// A peer that missed a mutant has no median and is not the better one.
	peer := ""
	for _, p := range []string{"stress", "synctest"} {
		if d, ok := medians[p]; ok && (peer == "" || d < medians[peer]) {
			peer = p
		}
	}
	if best == "" || peer == "" || medians[peer] == 0 {
		t.Fatalf("docs/bugbench.md's summary has no strategy or peer with a median time to catch: %v", medians)
	}
	first := strings.Join(strings.Fields(strings.SplitN(readme, "\n## ", 2)[0]), " ")
	want := []string{
		strings.ToUpper(best) + " strategy",
		fmt.Sprintf("%s against %s", spaced(medians[best]), spaced(medians[peer])),
		ratioWords(float64(medians[peer]) / float64(medians[best])),
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Errorf("README.md's first section does not say %q, which docs/bugbench.md's summary table gives (medians %v)", w, medians)
		}
	}
}

// ratioWords is how the README states the peer's median over the
// strategy's, rounded down: "91× lower" when the strategy is faster,
// "1.7× higher" (one decimal) when the peer is.
func ratioWords(r float64) string {
	if r >= 1 {
		return fmt.Sprintf("%d× lower", int(math.Floor(r)))
	}
	return fmt.Sprintf("%.1f× higher", math.Floor(10/r)/10)
}

// summaryMedians reads each approach's median wall time to the first
// catch from the last summary table of the page; an approach that did not
// catch every mutant has none.
func summaryMedians(t *testing.T, page string) map[string]time.Duration {
	t.Helper()
	i := strings.LastIndex(page, "| approach | caught | median wall to catch |")
	if i < 0 {
		t.Fatal("docs/bugbench.md has no summary table (| approach | caught | median wall to catch | …)")
	}
	medians := map[string]time.Duration{}
	for _, line := range strings.Split(page[i:], "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			break
		}
		name, caught, median := strings.TrimSpace(cells[1]), strings.Fields(cells[2]), strings.TrimSpace(cells[3])
		if len(caught) != 3 || caught[0] != caught[2] {
			continue // not every mutant caught: its median is past the cap
		}
		d, err := time.ParseDuration(median)
		if err != nil {
			t.Fatalf("docs/bugbench.md summary: %s's median %q: %v", name, median, err)
		}
		medians[name] = d
	}
	return medians
}

// spaced writes a table's duration as prose does: "1.43ms" as "1.43 ms".
func spaced(d time.Duration) string {
	s := d.String()
	for _, unit := range []string{"ms", "µs", "ns", "s"} {
		if num, ok := strings.CutSuffix(s, unit); ok {
			return num + " " + unit
		}
	}
	return s
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

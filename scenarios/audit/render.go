package audit

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

func mutantSummary(ms []MutantResult) string {
	if len(ms) == 0 {
		return "—"
	}
	var parts []string
	for _, m := range ms {
		switch {
		case m.Error != "":
			parts = append(parts, m.ID+": ERROR")
		case m.Caught:
			parts = append(parts, fmt.Sprintf("%s: caught@%d", m.ID, m.SeedsToCatch))
		default:
			parts = append(parts, fmt.Sprintf("%s: SURVIVED %d", m.ID, m.SeedBudget))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteTable prints the claims table for a terminal.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVERDICT\tMEASURED\tBOUND\tSEEDS\tMUTANTS (caught after N seeds)")
	for _, c := range r.Claims {
		v := c.Verdict
		if v != c.Expected {
			v += " (expected " + c.Expected + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, v, oneLine(c.Measured, 70), oneLine(c.Bound, 30), c.Seeds, mutantSummary(r.MutantsFor(c.ID)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Proofs) > 0 {
		fmt.Fprintln(w, "\nPROOFS (every schedule of a small configuration)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tVERDICT\tCONFIGURATION\tP\tREDUCTION\tSCHEDULES\tPRUNED\tEXHAUSTED")
		for _, p := range r.Proofs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%d\t%v\n", p.ID, p.Verdict, oneLine(p.Proof.Config, 60), p.Proof.MaxPreemptions, p.Proof.Reduction, p.Proof.Explored, p.Proof.Pruned, p.Proof.Exhausted)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Problems) == 0 {
		_, err := fmt.Fprintf(w, "\naudit: every claim has its expected verdict and every mutant was caught (%d claims, %d mutants)\n", len(r.Claims), len(r.Mutants))
		return err
	}
	fmt.Fprintf(w, "\naudit: %d problem(s):\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// WriteFiles writes dir/audit.json, dir/AUDIT.md and one SVG chart per
// claim with a distribution (dir/charts/<ID>.svg).
func WriteFiles(dir string, r *Report) error {
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "audit.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeMarkdown(&md, r)
	for _, c := range r.Claims {
		if len(c.Buckets) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "charts", c.ID+".svg"), []byte(histogramSVG(c)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "AUDIT.md"), []byte(md.String()), 0o644)
}

func writeMarkdown(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "# windtunnel audit\n\nCommit `%s`, %d seeds per scenario test. ", r.Commit, r.Seeds)
	if len(r.Problems) == 0 {
		fmt.Fprintf(b, "Every claim has its expected verdict and every mutant was caught.\n\n")
	} else {
		fmt.Fprintf(b, "**%d problem(s):**\n\n", len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(b, "- %s\n", p)
		}
		b.WriteString("\n")
	}
	b.WriteString("How to read it: *verdict* is what the checks found over all seeds (`holds`, `known-deviation` for a deviation the authors documented and the check reproduced, `violated`, `not-checked`); *measured* is the worst figure over every seed and test against its *bound*; *mutants* are deliberately broken variants of the production code and the number of seeds the checks needed to catch each one.\n\n")
	b.WriteString("| ID | verdict | measured | bound | seeds | mutants |\n|---|---|---|---|---|---|\n")
	for _, c := range r.Claims {
		v := c.Verdict
		if v != c.Expected {
			v = "**" + v + "** (expected " + c.Expected + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s |\n", c.ID, v, mdCell(c.Measured), mdCell(c.Bound), c.Seeds, mdCell(mutantSummary(r.MutantsFor(c.ID))))
	}
	if len(r.Proofs) > 0 {
		b.WriteString("\n## Proofs\n\nEvery schedule of a small configuration with at most P preemptive context switches, explored depth first by `sim.Explore` (a reduction skips schedules equivalent to explored ones).\n\n| ID | verdict | configuration | P | reduction | schedules | pruned | exhausted |\n|---|---|---|---|---|---|---|---|\n")
		for _, p := range r.Proofs {
			fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %d | %d | %v |\n", p.ID, p.Verdict, mdCell(p.Proof.Config), p.Proof.MaxPreemptions, p.Proof.Reduction, p.Proof.Explored, p.Proof.Pruned, p.Proof.Exhausted)
		}
	}
	b.WriteString("\n## Claims in detail\n")
	for _, c := range r.Claims {
		fmt.Fprintf(b, "\n### %s: %s\n\n*%s.*\n\n- verdict: **%s** (expected %s)\n- measured: %s\n- bound: %s\n- seeds: %d\n",
			c.ID, c.Verdict, mdCell(c.Text), c.Verdict, c.Expected, mdCell(c.Measured), mdCell(c.Bound), c.Seeds)
		if len(c.Tests) > 0 {
			fmt.Fprintf(b, "- checked by: `%s`\n", strings.Join(c.Tests, "`, `"))
		}
		if c.Note != "" {
			fmt.Fprintf(b, "- note: %s\n", mdCell(c.Note))
		}
		if c.Artifact != "" {
			fmt.Fprintf(b, "- artifact: `%s`\n", c.Artifact)
		}
		if len(c.Buckets) > 0 {
			fmt.Fprintf(b, "\n![%s distribution](charts/%s.svg)\n", c.ID, c.ID)
		}
		if c.Witness != "" {
			fmt.Fprintf(b, "\nWitness:\n\n```\n%s\n```\n", c.Witness)
		}
		for _, m := range r.MutantsFor(c.ID) {
			state := fmt.Sprintf("caught after %d seed(s) by `%s`", m.SeedsToCatch, m.CaughtBy)
			switch {
			case m.Error != "":
				state = "error: " + m.Error
			case !m.Caught:
				state = fmt.Sprintf("**survived** %d seeds", m.SeedBudget)
			}
			fmt.Fprintf(b, "- mutant `%s` (%s): %s\n", m.ID, m.What, state)
		}
	}
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

// histogramSVG draws a claim's distribution as a bar chart with a log-scaled
// count axis, so a single stale read next to a million fresh ones still shows.
func histogramSVG(c ClaimResult) string {
	const w, h, left, bottom, top = 640, 260, 50, 60, 30
	n := len(c.Buckets)
	barW := float64(w-left-10) / float64(max(n, 1))
	var maxC int64 = 1
	for _, bk := range c.Buckets {
		maxC = max(maxC, bk.Count)
	}
	logMax := math.Log10(float64(maxC) + 1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13">%s: %s (count, log scale)</text>`, left, html.EscapeString(c.ID), html.EscapeString(oneLine(c.Bound, 50)))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, left, h-bottom, w-10, h-bottom)
	for i, bk := range c.Buckets {
		hh := 0.0
		if bk.Count > 0 {
			hh = float64(h-bottom-top) * math.Log10(float64(bk.Count)+1) / logMax
		}
		x := float64(left) + float64(i)*barW
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7ab5"/>`, x+2, float64(h-bottom)-hh, barW-4, hh)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x+barW/2, float64(h-bottom)-hh-3, bk.Count)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="end" transform="rotate(-40 %.1f %d)">%s</text>`, x+barW/2, h-bottom+14, x+barW/2, h-bottom+14, html.EscapeString(bk.Label))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

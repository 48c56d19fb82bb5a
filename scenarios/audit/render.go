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
		case m.Caught && m.RaceRunsCaught+m.RaceRunsMissed > 0: // runs, not seeds
			parts = append(parts, fmt.Sprintf("%s: caught in %d/%d runs", m.ID, m.RaceRunsCaught, m.RaceRunsCaught+m.RaceRunsMissed))
		case m.Caught:
			parts = append(parts, fmt.Sprintf("%s: caught@%d", m.ID, m.SeedsToCatch))
		case m.RaceRunsMissed > 0:
			parts = append(parts, fmt.Sprintf("%s: SURVIVED %d runs", m.ID, m.RaceRunsMissed))
		default:
			parts = append(parts, fmt.Sprintf("%s: SURVIVED %d", m.ID, m.SeedBudget))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteTable prints the claims table for a terminal.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tVERDICT\tMEASURED\tBOUND\tTIGHT\tSEEDS\tMUTANTS (caught after N seeds)")
	for _, c := range r.Claims {
		v := c.Verdict
		if v != c.Expected {
			v += " (expected " + c.Expected + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, v, oneLine(c.Measured, 70), oneLine(c.Bound, 30), tightText(c.Tightness), c.Seeds, mutantSummary(r.MutantsFor(c.ID)))
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
	if len(r.Probes) > 0 {
		fmt.Fprintln(w, "\nPROBES (rare interleavings the checks required)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PROBE\tCLAIM\tSEEDS\tTIMES\tMIN\tWHAT")
		for _, p := range r.Probes {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", p.Name, p.Claim, p.Seeds, p.Count, p.Min, oneLine(p.What, 70))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Problems) == 0 {
		_, err := fmt.Fprintf(w, "\naudit: every claim has its expected verdict, every tight bound was reached, every probe was reached and every mutant was caught (%d claims, %d mutants of which %d tolerance and %d lock)\n",
			len(r.Claims), len(r.Mutants), countKind(r.Mutants, "tolerance"), countKind(r.Mutants, "lock"))
		return err
	}
	fmt.Fprintf(w, "\naudit: %d problem(s):\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	return nil
}

func tightText(t *float64) string {
	if t == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *t)
}

func countKind(ms []MutantResult, kind string) int {
	n := 0
	for _, m := range ms {
		if m.Kind == kind {
			n++
		}
	}
	return n
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
	writeMarkdown(&md, r, dir)
	for _, c := range r.Claims {
		var svg string
		switch {
		case c.Hist != nil:
			svg = windowSVG(c)
		case len(c.Buckets) > 0:
			svg = histogramSVG(c)
		default:
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "charts", c.ID+".svg"), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "AUDIT.md"), []byte(md.String()), 0o644)
}

func writeMarkdown(b *strings.Builder, r *Report, dir string) {
	seeds := fmt.Sprintf("%d seeds per scenario test", r.Seeds)
	if r.Seeds == 0 {
		seeds = "each scenario test at its default seed count (the Seeds column)"
	}
	fmt.Fprintf(b, "# windtunnel audit\n\nCommit `%s`, %s. ", r.Commit, seeds)
	if len(r.Problems) == 0 {
		fmt.Fprintf(b, "Every claim has its expected verdict and every mutant was caught.\n\n")
	} else {
		fmt.Fprintf(b, "**%d problem(s):**\n\n", len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(b, "- %s\n", p)
		}
		b.WriteString("\n")
	}
	b.WriteString("How to read it: *verdict* is what the checks found over all seeds (`holds`, `known-deviation` for a deviation the authors documented and the check reproduced, `violated`, `inconclusive` when fewer seeds than a check's default broke nothing but did not exercise it as its default seeds must, `not-checked`; anything but the expected verdict fails the audit); *measured* is the worst figure over every seed and test against its *bound*; *mutants* are deliberately broken variants of the production code and the number of seeds the checks needed to catch each one.\n\n")
	b.WriteString("*tightness* is worst / bound for a bound the design may reach: only a check that drives the design close to its bound can tell the bound from a slightly wider one.\n\n")
	b.WriteString("| ID | verdict | measured | bound | tightness | seeds | mutants |\n|---|---|---|---|---|---|---|\n")
	for _, c := range r.Claims {
		v := c.Verdict
		if v != c.Expected {
			v = "**" + v + "** (expected " + c.Expected + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d | %s |\n", c.ID, v, mdCell(c.Measured), mdCell(c.Bound), tightText(c.Tightness), c.Seeds, mdCell(mutantSummary(r.MutantsFor(c.ID))))
	}
	if len(r.Probes) > 0 {
		b.WriteString("\n## Probes\n\nRare interleavings the claim checks require their seeds (or proofs their schedules) to reach; a probe that was never reached fails the audit.\n\n| probe | claim | seeds | times | min | what |\n|---|---|---|---|---|---|\n")
		for _, p := range r.Probes {
			fmt.Fprintf(b, "| `%s` | %s | %d | %d | %d | %s |\n", p.Name, p.Claim, p.Seeds, p.Count, p.Min, mdCell(p.What))
		}
	}
	if len(r.Proofs) > 0 {
		b.WriteString("\n## Proofs\n\nEvery schedule of a small configuration with at most P preemptive context switches, explored depth first by `sim.Explore` (a reduction skips schedules equivalent to explored ones).\n\n| ID | verdict | configuration | P | reduction | schedules | pruned | exhausted |\n|---|---|---|---|---|---|---|---|\n")
		for _, p := range r.Proofs {
			fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %d | %d | %v |\n", p.ID, p.Verdict, mdCell(p.Proof.Config), p.Proof.MaxPreemptions, p.Proof.Reduction, p.Proof.Explored, p.Proof.Pruned, p.Proof.Exhausted)
		}
	}
	writeCounterexamples(b, r, dir)
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
		if c.Table != "" {
			fmt.Fprintf(b, "- counterexample: [interleaving](%s)", rel(dir, c.Table))
			if c.Timeline != "" {
				fmt.Fprintf(b, ", [timeline](%s)", rel(dir, c.Timeline))
			}
			b.WriteString("\n")
		}
		if c.Hist != nil || len(c.Buckets) > 0 {
			fmt.Fprintf(b, "\n![%s distribution](charts/%s.svg)\n", c.ID, c.ID)
		}
		if c.Witness != "" {
			fmt.Fprintf(b, "\nWitness:\n\n```\n%s\n```\n", c.Witness)
		}
		for _, m := range r.MutantsFor(c.ID) {
			state := m.Catch(func(s string) string { return "`" + s + "`" })
			switch {
			case m.Error != "":
				state = "error: " + m.Error
			case !m.Caught:
				state = "**survived** " + m.Survival()
			}
			fmt.Fprintf(b, "- %s mutant `%s` (%s): %s\n", m.Kind, m.ID, m.What, state)
			if m.Reproduce != "" {
				fmt.Fprintf(b, "  - reproduce: `%s`\n", m.Reproduce)
			}
			if line := counterexampleLine(m, dir); line != "" {
				fmt.Fprintf(b, "  - %s\n", line)
			}
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

// windowSVG draws a window claim's distribution on a linear axis from 0 to
// 1.2 × the bound, the bound as a line and the worst observation marked, so
// 830 ms and 999 ms fall in different bars. Counts use a log scale, so a
// single read near the bound next to thousands of fresh ones still shows.
func windowSVG(c ClaimResult) string {
	const w, h, left, bottom, top = 720, 280, 60, 50, 36
	hst := c.Hist
	n := len(hst.Bins)
	plotW := float64(w - left - 20)
	barW := plotW / float64(max(n, 1))
	var maxC int64 = 1
	for _, v := range hst.Bins {
		maxC = max(maxC, v)
	}
	logMax := math.Log10(float64(maxC) + 1)
	x := func(v float64) float64 { return float64(left) + plotW*v/hst.Upper }
	unit := "s"
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13">%s: %s (count per %.3g%s, log scale); bound %s</text>`,
		left, html.EscapeString(c.ID), html.EscapeString(c.BoundName), hst.Upper/float64(max(n, 1)), unit, html.EscapeString(oneLine(c.Bound, 40)))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, left, h-bottom, w-20, h-bottom)
	for i, v := range hst.Bins {
		hh := 0.0
		if v > 0 {
			hh = float64(h-bottom-top) * math.Log10(float64(v)+1) / logMax
		}
		bx := float64(left) + float64(i)*barW
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7ab5"><title>%d</title></rect>`, bx+0.5, float64(h-bottom)-hh, barW-1, hh, v)
	}
	for i := 0; i <= 6; i++ {
		v := hst.Upper * float64(i) / 6
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.3g</text>`, x(v), h-bottom+14, v)
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c0392b" stroke-width="2"/><text x="%.1f" y="%d" fill="#c0392b">bound %.4g%s</text>`,
		x(hst.Bound), top-6, x(hst.Bound), h-bottom, x(hst.Bound)+4, top+4, hst.Bound, unit)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#27ae60" stroke-dasharray="4 3"/><text x="%.1f" y="%d" fill="#27ae60" text-anchor="end">worst %.6g%s</text>`,
		x(min(hst.Worst, hst.Upper)), top+10, x(min(hst.Worst, hst.Upper)), h-bottom, x(min(hst.Worst, hst.Upper))-4, top+20, hst.Worst, unit)
	if hst.Over > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#c0392b" text-anchor="end">%d beyond the axis</text>`, w-20, h-bottom+30, hst.Over)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

package mutants

// lfMutants are the log-filter mutants (LF-*), in impl/logfilter; their
// checks are in scenarios/lf.
var lfMutants = []Mutant{
	{
		// IsPlain has no bracket check of its own: brackets and braces
		// fail the target check. Weakening that check to "non-empty" lets
		// span and field directives through.
		ID: "lf-span-directive-plain", Claims: []string{"LF-1"},
		What:  "a span or field directive is classified as plain: the router checks only that a target is non-empty",
		File:  "impl/logfilter/classify.go",
		Old:   "if !ok || !validTarget(target) {",
		New:   "if !ok || target == \"\" {",
		Tests: "^TestLF1_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-whitespace-not-trimmed", Claims: []string{"LF-1"},
		What:  "the router does not trim segments, so plain lists with whitespace around a segment stay span-aware",
		File:  "impl/logfilter/classify.go",
		Old:   "\t\tseg = strings.TrimSpace(seg)\n",
		New:   "",
		Tests: "^TestLF1_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-target-prefix-without-boundary", Claims: []string{"LF-2"},
		What:  "a target directive covers every target it is a string prefix of (buzz_relay covers buzz_relayer): no segment boundary",
		File:  "impl/logfilter/target.go",
		Old:   "\trest := target[len(rule):]\n\treturn rest == \"\" || strings.HasPrefix(rest, \"::\")",
		New:   "\treturn true // a raw string prefix, as tracing compares",
		Tests: "^TestLF2_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-table-level-off-by-one", Claims: []string{"LF-2"},
		What:  "the target table drops events exactly at a directive's level (> instead of >=)",
		File:  "impl/logfilter/targets.go",
		Old:   "return min != LevelOff && level >= min",
		New:   "return min != LevelOff && level > min",
		Tests: "^TestLF2_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-aware-level-off-by-one", Claims: []string{"LF-2"},
		What:  "the span-aware filter's static directives drop events exactly at their level (> instead of >=)",
		File:  "impl/logfilter/spanaware.go",
		Old:   "\treturn level >= min\n",
		New:   "\treturn level > min\n",
		Tests: "^TestLF2_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-empty-level-to-target-table", Claims: []string{"LF-3"},
		What:  "an empty level (target=) counts as plain and is routed to the target table, which reads it as ERROR",
		File:  "impl/logfilter/classify.go",
		Old:   "if _, ok := parseLevel(lv); !ok {",
		New:   "if _, ok := parseLevel(lv); !ok && lv != \"\" {",
		Tests: "^TestLF3_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-aware-empty-level-error", Claims: []string{"LF-3"},
		What:  "the span-aware parser reads an empty level as ERROR, as the target table does, instead of every level",
		File:  "impl/logfilter/parse.go",
		Old:   "parser would read ERROR, which is why such lists are not plain.\n\t\td.Level = LevelTrace",
		New:   "parser would read ERROR, which is why such lists are not plain.\n\t\td.Level = LevelTrace + 16 // ERROR",
		Tests: "^TestLF3_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-scope-ignored", Claims: []string{"LF-4"},
		What:  "a span directive enables its level everywhere, not only inside matching spans",
		File:  "impl/logfilter/spanaware.go",
		Old:   "\tif !ok {\n\t\tmin = f.global\n\t}",
		New:   "\tif !ok {\n\t\tmin = f.global\n\t}\n\tfor _, d := range f.dynamics {\n\t\tif d.Level < min {\n\t\t\tmin = d.Level // the span scope is ignored\n\t\t}\n\t}",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-name-prefix", Claims: []string{"LF-4"},
		What:  "a span directive matches spans whose name starts with its name ([conn] selects connection spans)",
		File:  "impl/logfilter/spanaware.go",
		Old:   "if d.Span != \"\" && d.Span != s.name {",
		New:   "if d.Span != \"\" && d.Span != s.name[:min(len(s.name), len(d.Span))] {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-nested-span-forgets-enclosing", Claims: []string{"LF-4"},
		What:  "a span entered within a conn span keeps only its own directive's level, not the enclosing conn span's",
		File:  "impl/logfilter/spans.go",
		Old:   "levels[i] = min(levels[i], parent.levels[i])",
		New:   "_ = parent.levels[i] // the innermost span alone decides",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-close-keeps-span", Claims: []string{"LF-4"},
		What:  "closing a span leaves it registered: entering it again after its close still enables its directive's level",
		File:  "impl/logfilter/spans.go",
		Old:   "\t\tf.unregister(sp)\n",
		New:   "\t\t_ = f // the span stays registered\n",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-target-path-read-lock", Claims: []string{"LF-5"},
		What:  "the target path keeps a span registry under a read/write lock anyway: every span enter and exit takes its read lock",
		File:  "impl/logfilter/filter.go",
		Old:   "\tif IsPlain(list) {\n\t\treturn NewTargets(list)\n\t}",
		New:   "\tif IsPlain(list) {\n\t\tf, err := NewTargets(list)\n\t\tif err == nil {\n\t\t\tif r == nil {\n\t\t\t\tr = rt.Real()\n\t\t\t}\n\t\t\tf.aware = newSpanAware(r, f.directives)\n\t\t}\n\t\treturn f, err\n\t}",
		Tests: "^TestLF5_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-exit-skips-read-lock", Claims: []string{"LF-5"},
		What:  "the span-aware filter no longer looks a span up on exit: one read lock per filter per enter, none per exit",
		File:  "impl/logfilter/spans.go",
		Old:   "\tfor _, f := range sp.spans.aware {\n\t\tf.lookup(sp)\n\t}\n",
		New:   "",
		Tests: "^TestLF5_",
		Pkg:   "./scenarios/lf",
	},
	{
		// Survived until LF-2's events came from buzz_relay:conn too.
		ID: "lf-single-colon-boundary", Claims: []string{"LF-2"},
		What:  "a single colon counts as a segment boundary: buzz_relay=debug covers the lookalike buzz_relay:conn",
		File:  "impl/logfilter/target.go",
		Old:   "return rest == \"\" || strings.HasPrefix(rest, \"::\")",
		New:   "return rest == \"\" || strings.HasPrefix(rest, \":\")",
		Tests: "^TestLF2_",
		Pkg:   "./scenarios/lf",
	},
	{
		// Survived until LF-2's lists named a one-letter target, b, and
		// its events came from b::conn.
		ID: "lf-parent-lookup-stops-short", Claims: []string{"LF-2"},
		What:  "the span-aware filter's parent lookup stops one character before the start of the target, so a one-letter parent (b for b::conn) is never found",
		File:  "impl/logfilter/spanaware.go",
		Old:   "!ok && i > 0; i--",
		New:   "!ok && i > 1; i--",
		Tests: "^TestLF2_",
		Pkg:   "./scenarios/lf",
	},
	// How span directives combine, as EnvFilter combines them: each
	// survived LF-4 while its lists named each span once, by name alone.
	{
		ID: "lf-span-directives-last-match-wins", Claims: []string{"LF-4"},
		What:  "of two span directives matching one span, the one met last wins instead of the more verbose",
		File:  "impl/logfilter/spanaware.go",
		Old:   "level = min(level, d.Level)",
		New:   "level = d.Level",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-field-directive-needs-a-span-name", Claims: []string{"LF-4"},
		What:  "a directive with fields and no span name ([{task=0}]) matches no span",
		File:  "impl/logfilter/spanaware.go",
		Old:   "if d.Span != \"\" && d.Span != s.name {",
		New:   "if d.Span != s.name {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-field-value-ignored", Claims: []string{"LF-4"},
		What:  "a field directive matches any span with a field of that name, whatever its value",
		File:  "impl/logfilter/spanaware.go",
		Old:   "if h == w {",
		New:   "if h.Name == w.Name {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-directive-target-exact", Claims: []string{"LF-4"},
		What:  "a span directive's target matches only spans of that exact target, not of targets below it",
		File:  "impl/logfilter/spanaware.go",
		Old:   "if d.Target != \"\" && !within(d.Target, s.target) {",
		New:   "if d.Target != \"\" && d.Target != s.target {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-repeated-span-directive-kept", Claims: []string{"LF-4"},
		What:  "a span directive named twice keeps both (the more verbose wins) instead of the later replacing the earlier",
		File:  "impl/logfilter/spanaware.go",
		Old:   "\t\t\tif !seen[key] {",
		New:   "\t\t\tif true {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-span-directive-without-level-reads-info", Claims: []string{"LF-4"},
		What:  "a span directive with no level ([connection]) enables info and above, not every level as EnvFilter does",
		File:  "impl/logfilter/parse.go",
		Old:   "\t\td.Level = LevelTrace // target[span] with no '=': every level",
		New:   "\t\td.Level = LevelTrace + 12",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-bare-target-reads-info", Claims: []string{"LF-4"},
		What:  "a bare target in a span-aware list (other) enables info and above for it, not every level as EnvFilter does",
		File:  "impl/logfilter/parse.go",
		Old:   "return Directive{Target: s, Level: LevelTrace}, nil",
		New:   "return Directive{Target: s, Level: LevelTrace + 12}, nil",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	// Each survived every LF check until the checks grew what it needs. LF-1
	// needed rows at the parsers' limits, measured by growing lists (the
	// table's lists were all short and the reference knew nothing of size).
	// LF-4 needed exits in orders drawn from the seed (spans were only ever
	// exited innermost first). The checks also needed registries of every
	// shape, a target table installed before a span-aware filter too (no
	// check installed a plain filter first).
	{
		ID: "lf-max-segments-inclusive", Claims: []string{"LF-1"},
		What:  "a plain list of exactly as many segments as the parsers accept is classified as not plain: the segment limit made inclusive",
		File:  "impl/logfilter/classify.go",
		Old:   "if n++; n > MaxSegments {",
		New:   "if n++; n >= MaxSegments {",
		Tests: "^TestLF1_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-max-bytes-inclusive", Claims: []string{"LF-1"},
		What:  "a plain list of exactly as many bytes as the parsers accept is classified as not plain: the byte limit made inclusive",
		File:  "impl/logfilter/classify.go",
		Old:   "if len(list) > MaxListBytes {",
		New:   "if len(list) >= MaxListBytes {",
		Tests: "^TestLF1_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-exit-only-innermost", Claims: []string{"LF-4"},
		What:  "exiting a span looks only at the innermost entered span: an outer conn span exited while an inner span is open stays entered, and debug stays enabled",
		File:  "impl/logfilter/spans.go",
		Old:   "\tfor ; n != nil; n = n.parent {\n\t\tif n.span == sp {",
		New:   "\tfor ; n != nil; n = nil {\n\t\tif n.span == sp {",
		Tests: "^TestLF4_",
		Pkg:   "./scenarios/lf",
	},
	{
		ID: "lf-handler-index-among-all-filters", Claims: []string{"LF-4", "LF-5"},
		What:  "a handler finds its filter's span levels at the filter's position among all installed filters, not among the span-aware ones: with a target table installed first, logging inside a span panics",
		File:  "impl/logfilter/handler.go",
		Old:   "\t\th.idx = s.awareIndex(f)",
		New:   "\t\th.idx = s.index(f)",
		Tests: "^TestLF[45]_",
		Pkg:   "./scenarios/lf",
	},
	// Data races no simulated check can see (mutants.Mutant.Race): the
	// lock each leaves out holds no scheduling point.
	{
		ID: "lf-register-without-lock", Claims: []string{"LF-4"},
		What:  "a new span is registered without the filter's write lock: a data race with every enter, exit and close",
		File:  "impl/logfilter/spanaware.go",
		Old:   "\tf.mu.Lock()\n\tf.spans[s] = level\n\tf.mu.Unlock()",
		New:   "\tf.spans[s] = level",
		Tests: "^TestLF4_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/lf",
		Race:  true,
	},
	{
		ID: "lf-unregister-without-lock", Claims: []string{"LF-4"},
		What:  "a closed span is removed without the filter's write lock: a data race with every start, enter and exit",
		File:  "impl/logfilter/spanaware.go",
		Old:   "\tf.mu.Lock()\n\tdelete(f.spans, s)\n\tf.mu.Unlock()",
		New:   "\tdelete(f.spans, s)",
		Tests: "^TestLF4_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/lf",
		Race:  true,
	},
}

// lfSites are where impl/logfilter encodes the LF bounds of the claims
// table. None: LF-5's counts (0 locks per span enter and exit on the target
// path, one read lock per span-aware filter) are not literals in the code
// but what its structure does, so no literal or comparison can be widened;
// lf-target-path-read-lock and lf-exit-skips-read-lock move each count by
// one instead.
var lfSites = []Site{}

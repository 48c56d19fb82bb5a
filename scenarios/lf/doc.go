// Package lf holds the claim checks of the log filter (LF-1 to LF-5 of
// CLAIMS.md; source text: the first half of
// ../shared/seeds/open-channels-cache.txt). They run against the production
// code of impl/logfilter. The deterministic checks (LF-1 to LF-3) run it
// directly. The concurrency checks (LF-4, LF-5) run it under the simulator
// with the filters' locks on the simulated runtime, and LF-4 also on real
// goroutines under the race detector.
//
//	LF-1  classify_test.go      a list takes the lock-free target table exactly when it is plain: a table, rows at the parsers' limits (measured by growing lists) and two generators against a reference classifier, the path observed from outside
//	LF-1  refusals_test.go      a refused list names its segment (place, text, kind, detail) as ParseError documents; a long one quoted cut at a rune boundary; the target table's reader refuses span directives
//	LF-2  differential_test.go  for plain lists the target table logs what the span-aware filter logs: 17+ fixed and generated lists, eight targets, every level, inside and outside spans, captured output
//	LF-2  handler_test.go       the Handler passes testing/slogtest on both paths, filters records given to Handle, reads its target as documented (groups, empty groups, the last one), and takes a nil context
//	LF-3  emptylevel_test.go    `target=` is every level span-aware, ERROR in the target table, so it never takes the target path: directed lists and generated ones through LF-2's workload
//	LF-4  spanscope_test.go     [conn]=debug holds only inside conn spans and the spans entered within them: tasks interleaving spans under the simulator, exiting them in orders drawn from the seed (outer before inner too), in a registry shape drawn from the seed (both filters span-aware, or one a target table, in either order), every event's fate checked, with probes; directives combined as EnvFilter does (the more verbose wins, a repeated one replaces, targets below match, fields by value, no level means every level)
//	LF-4  racefree_test.go      the same lists, shapes and reference on real goroutines, under the race detector in make race: the registry's races the simulator cannot see
//	LF-4  handler_test.go       Spans.Handler refuses a nil next and an uninstalled filter; NewSpans skips nil and repeated filters; one dynamic directive registers, Close unregisters; nil contexts; Directives is a copy
//	LF-5  locks_test.go         0 lock acquisitions per span enter and exit on the target path, one read lock per span-aware filter (2 with logs and telemetry), counted under the simulator; every mix installed in both orders
//	LF-5  bench_test.go         BenchmarkLF5_SpanEnterExit: 8 goroutines entering spans and logging dropped events, both paths in one run, and their ratio
//
// The references (the classifier, the reading of plain lists, LF-4's span
// scopes) are written in the checks from the claims' words and share no
// code with the package; paths and lock counts are observed through a
// counting rt.Runtime (helpers_test.go), never taken from the package's
// own description of itself. LF-5's counts come from
// scenarios/claims.Table; the mutants these checks must catch are in
// scenarios/mutants/lf.go.
package lf

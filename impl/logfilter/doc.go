// Package logfilter filters log/slog events by directives in the syntax of
// tracing-subscriber (RUST_LOG style), without a contended lock for the
// lists that do not need one. It implements the log-filtering half of the
// change described in the source text (../shared/seeds/open-channels-cache.txt):
//
//	EnvFilter takes a shared RwLock read on every span enter and exit, even
//	when no directive names a span. [...] Plain target=level directive lists
//	now filter through Targets, which keeps no per-span state. Directives
//	that name spans or fields still use EnvFilter, which is the only filter
//	that understands them.
//
// # Two filters and the rule between them
//
// The span-aware filter (NewSpanAware, tracing's EnvFilter) understands
// everything. It takes static directives, info or buzz_relay=debug, and
// dynamic ones, [conn]=debug or buzz_relay[conn{peer=a}]=trace. Dynamic ones
// enable a level inside matching spans and the spans entered within them. To
// know which spans match, it keeps a registry of spans behind an rt.RWMutex.
// Creating a matching span writes it, closing one deletes it, and every enter
// and every exit of any span reads it. Those reads are the cost the source
// text removes. Under load every worker contends on the lock, twice per span
// poll, and twice again when two filters (logs and telemetry) are installed.
//
// The target table (NewTargets, tracing's Targets) understands only `level`
// and `target=level`, is immutable once built, and keeps no span state. Span
// enter and exit do nothing for it. An event check is a scan of a few rules
// with no lock, no atomic and no shared writes.
//
// New chooses between them by one rule, IsPlain (claim LF-1). A list takes
// the target table exactly when every non-empty segment, trimmed, is `level`
// or `target=level` with a known, non-empty level, and no segment names a
// span or a field. For such lists both filters log exactly the same events
// (LF-2). Every other list stays span-aware, including two that look plain
// but are not:
//
//   - An empty level, `target=`: the span-aware parser reads it as TRACE
//     (every level), as EnvFilter does. The target table's own parser reads
//     it as ERROR, as Targets does (tracing-core parses an empty level
//     filter as ERROR). Sending it to the table would silently drop
//     everything below ERROR for that target (LF-3), so it never goes there.
//   - An empty target, `=debug`: not `target=level`, so not plain. The
//     span-aware parser reads it as a bare level (as tracing's newer
//     directive parser does); the table's parser rejects it.
//
// A bad level, an unclosed bracket and the like make the list not plain too.
// New then reports the span-aware parser's error, which names the segment
// (index and text) and what is wrong.
//
// # Targets
//
// A target is a module-style path whose segments are separated by "::", like
// buzz_relay::conn. A directive for buzz_relay covers buzz_relay and
// buzz_relay::conn but not buzz_relayer. Matching is at segment boundaries,
// where tracing compares raw string prefixes. Both filters use this rule,
// with separate code, so a fault in either shows in their differential. Of
// the directives covering a target, the most specific (the longest) decides.
// With none, the bare level decides. With no bare level either, the event is
// dropped. An empty list therefore enables nothing.
//
// Events get their target from the logger: Logger.With(Target("...")).
//
// # Spans in the context
//
// Go has no thread-local "current span", so spans travel in the
// context.Context, which is also what makes them follow work across
// goroutines:
//
//	span := spans.Start("buzz_relay::conn", "conn", slog.String("peer", addr))
//	defer span.Close()
//	ctx = span.Enter(ctx)
//	logger.DebugContext(ctx, "handshake") // enabled by [conn]=debug
//	ctx = span.Exit(ctx)
//
// A Spans registry is made for a fixed set of filters (NewSpans) and gives
// each a Handler (Spans.Handler). With two filters installed, one Enter
// consults both span-aware filters, one read lock each, and Exit the same.
// That is 2 read-lock acquisitions per enter and per exit on the span-aware
// path, 0 on the target path (LF-5). Dynamic directives match a span by its
// target (segment rule), its name (exactly) and its fields (by the text of
// their values). A span's level is the most verbose of its matching
// directives. An event passes if its level is at least that of any entered
// span or if the static directives pass it. As in EnvFilter, a span directive
// enables events of every target inside the span.
//
// # Limits and the runtime seam
//
// Parsing never panics. A list is at most MaxListBytes (64 KiB) with at
// most MaxSegments (1,024) non-empty segments.
//
// The span-aware filter's lock comes from the rt.Runtime given to New
// (rt.Real() in a service, the simulator in tests), and the package keeps
// the repository's determinism contract: no goroutines, clocks, channels,
// sync or atomics, and no map iteration.
package logfilter

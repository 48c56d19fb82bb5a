package mutants

// drMutants are the metrics-drain mutants (DR-*), in impl/collector and,
// for the exposition DR-9's series is read through, impl/stats.
// The claim checks are in scenarios/dr (doc.go lists them); each mutant
// names the tests that must catch it. Claims lists every claim whose test
// catches it, the claim CLAIMS.md names it under first.
var drMutants = []Mutant{
	{
		ID: "dr-lock-hold-gauge-never-updated", Claims: []string{"DR-8"},
		What:  "a drain's longest write-lock hold is never reported: the gauge stays 0",
		File:  "impl/collector/metrics.go",
		Old:   "\tm.lockHoldMaxNs.SetMax(int64(st.MaxLockHeld))\n",
		New:   "",
		Tests: "^TestDR(1|4)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-full-refusal-not-counted", Claims: []string{"DR-1"},
		What:  "a record refused by a full buffer is not counted: only invalid refusals are",
		File:  "impl/collector/collector.go",
		Old:   "\t\tc.m.rejected.With(\"full\").Inc()\n",
		New:   "",
		Tests: "^TestDR1_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-moved-under-lock-not-exported", Claims: []string{"DR-2"},
		What:  "the points a drain moved under the write lock are measured but never added to their counter",
		File:  "impl/collector/metrics.go",
		Old:   "\tm.movedUnderLock.Add(st.MovedUnderLock)\n",
		New:   "",
		Tests: "^TestDR(1|4)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-split-off-by-one", Claims: []string{"DR-1"},
		What:  "the cutoff rule drains a point exactly at the cutoff (TS <= cutoff)",
		File:  "impl/collector/chunks.go",
		Old:   "return ts < cutoff // DR-1",
		New:   "return ts <= cutoff // DR-1",
		Tests: "^TestDR1_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-chunk-bounds-not-updated", Claims: []string{"DR-1", "DR-6"},
		What:  "a record does not update its chunk's oldest/newest timestamp, so the split moves straddling chunks whole",
		File:  "impl/collector/chunks.go",
		Old:   "\tt.minTS, t.maxTS = min(t.minTS, p.TS), max(t.maxTS, p.TS) // DR-6: the split trusts these bounds\n",
		New:   "",
		Tests: "^TestDR(1|6)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-split-under-write-lock", Claims: []string{"DR-2", "DR-3"},
		What:  "the split runs inside the first swap's write lock, moving every buffered point under it",
		File:  "impl/collector/drain.go",
		Old:   "c.writeLocked(&st, func() { old = c.swapOut() })\n\tdrained, kept = c.splitAll(old, cut, &st)",
		New:   "c.writeLocked(&st, func() { old = c.swapOut(); drained, kept = c.splitAll(old, cut, &st) })",
		Tests: "^TestDR(2|3)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-relock-around-split", Claims: []string{"DR-3", "DR-2"},
		What:  "the write lock is free when the split starts but taken again around the split (the seed review's case)",
		File:  "impl/collector/drain.go",
		Old:   "drained, kept = c.splitAll(old, cut, &st)",
		New:   "c.data.Lock(); drained, kept = c.splitAll(old, cut, &st); c.data.Unlock()",
		Tests: "^TestDR(3|2)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-drain-mutex-released-early", Claims: []string{"DR-4"},
		What:  "the drain mutex is released right after the first swap, so another drain can swap during the split",
		File:  "impl/collector/drain.go",
		Old:   "defer c.drainMu.Unlock() // DR-4: the swap, split and put-back of concurrent drains run one at a time\n\tc.writeLocked(&st, func() { old = c.swapOut() })",
		New:   "c.writeLocked(&st, func() { old = c.swapOut() })\n\tc.drainMu.Unlock()",
		Tests: "^TestDR4_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-putback-prepends", Claims: []string{"DR-5", "DR-7"},
		What:  "the put-back puts the chunks recorded during the split before the kept ones",
		File:  "impl/collector/drain.go",
		Old:   "kept[key] = join(kept[key], recent)",
		New:   "kept[key] = join(recent, kept[key])",
		Tests: "^TestDR(5|7)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-chunk-size-unbounded", Claims: []string{"DR-6"},
		What:  "a record appends to the last chunk however full it is: one key's points become one growing vector",
		File:  "impl/collector/chunks.go",
		Old:   "if t == nil || len(t.pts) >= ChunkPoints {",
		New:   "if t == nil {",
		Tests: "^TestDR6_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-query-includes-upper-bound", Claims: []string{"DR-7"},
		What:  "a query returns the points at its upper bound too ([from, to] instead of [from, to))",
		File:  "impl/collector/chunks.go",
		Old:   "if from <= p.TS && p.TS < to {",
		New:   "if from <= p.TS && p.TS <= to {",
		Tests: "^TestDR7_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-query-blind-during-drain", Claims: []string{"DR-7"},
		What:  "a query during a drain returns nothing, not the points recorded since the swap (a deviation beyond the documented one)",
		File:  "impl/collector/collector.go",
		Old:   "\ts := c.series[key]\n\tif s == nil {\n\t\treturn nil, nil\n\t}\n\treturn s.appendRange(nil, lo, hi), nil",
		New:   "\ts := c.series[key]\n\tif s == nil || c.inFlight > 0 {\n\t\treturn nil, nil\n\t}\n\treturn s.appendRange(nil, lo, hi), nil",
		Tests: "^TestDR7_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-putback-compacts-under-lock", Claims: []string{"DR-2", "DR-8"},
		What: "the put-back compacts every kept key into full chunks, copying the kept points while it holds the write lock",
		File: "impl/collector/drain.go",
		Old:  "\tc.series = kept\n",
		New: "\tfor key, s := range kept { // compact the split remnants back into full chunks\n" +
			"\t\tfull := &series{}\n" +
			"\t\tfor ch := s.head; ch != nil; ch = ch.next {\n" +
			"\t\t\tfor _, p := range ch.pts {\n" +
			"\t\t\t\tfull.add(p)\n" +
			"\t\t\t}\n" +
			"\t\t}\n" +
			"\t\tkept[key] = full\n" +
			"\t}\n" +
			"\tc.series = kept\n",
		Tests: "^TestDR(2|8)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-chunk-size-2048", Claims: []string{"DR-6"},
		What:  "chunks of 2,048 points instead of the source text's 1,024",
		File:  "impl/collector/chunks.go",
		Old:   "const ChunkPoints = 1024",
		New:   "const ChunkPoints = 2048",
		Tests: "^TestDR6_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-prune-point-by-point", Claims: []string{"DR-10"},
		What: "prune partitions point by point under the write lock, rebuilding every key's kept points instead of splitting its chunks",
		File: "impl/collector/collector.go",
		Old:  "\t\td, k, _ := s.split(cut)\n",
		New: "\t\tvar d, k series\n" +
			"\t\tfor ch := s.head; ch != nil; ch = ch.next {\n" +
			"\t\t\tfor _, p := range ch.pts {\n" +
			"\t\t\t\tif drainedTS(p.TS, cut) {\n" +
			"\t\t\t\t\td.points++\n" +
			"\t\t\t\t} else {\n" +
			"\t\t\t\t\tk.add(p)\n" +
			"\t\t\t\t}\n" +
			"\t\t\t}\n" +
			"\t\t}\n",
		Tests: "^TestDR10_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Found by a mutation hunt: every timestamp was on the stamps'
		// millisecond grid and every cutoff a point's timestamp, so no point
		// lay 1 ns before a cutoff. DR-1 now draws each cutoff 1 ns before,
		// on or 1 ns after a point and meets all three at every step; the
		// world's drain and prune cutoffs are drawn the same way, so DR-11's
		// prunes meet such points too.
		ID: "dr-prune-cutoff-minus-one", Claims: []string{"DR-1", "DR-11"},
		What:  "prune splits at cutoff-1 ns: a point 1 ns before the cutoff is kept, not pruned",
		File:  "impl/collector/collector.go",
		Old:   "d, k, _ := s.split(cut)",
		New:   "d, k, _ := s.split(cut - 1)",
		Tests: "^TestDR(1|11)_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-aggregate-dimension-dropped", Claims: []string{"DR-11"},
		What:  "the bucket index is not reset per key, so a key's points are summed into the bucket of an earlier key with the same start: keys that differ only in a dimension merge",
		File:  "impl/collector/aggregate.go",
		Old:   "\t\tclear(index)\n",
		New:   "",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-aggregate-point-summed-twice", Claims: []string{"DR-11"},
		What:  "a bucket opens with its first point's value as its sum and then adds the point again",
		File:  "impl/collector/aggregate.go",
		Old:   "Min: p.Value, Max: p.Value})",
		New:   "Sum: p.Value, Min: p.Value, Max: p.Value})",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-worker-error-not-counted", Claims: []string{"DR-9"},
		What:  "a failed flush cycle is logged but not counted in worker_errors_total",
		File:  "impl/collector/worker.go",
		Old:   "\tw.errs.With(\"metrics_flush\").Inc() // DR-9: counted for this cycle; the loop goes on\n",
		New:   "",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-worker-stops-after-failure", Claims: []string{"DR-9"},
		What:  "the flush worker stops after a failed cycle",
		File:  "impl/collector/worker.go",
		Old:   "\tw.logf(\"metrics flush: drain failed: %v\", err)\n",
		New:   "\tw.logf(\"metrics flush: drain failed: %v\", err)\n\tw.cancel() // a failed drain stops the worker\n",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-worker-panic-escapes", Claims: []string{"DR-9"},
		What:  "a panicking drain is not recovered on its task (the process would die)",
		File:  "impl/collector/worker.go",
		Old:   "if p := recover(); p != nil {",
		New:   "if p := any(nil); p != nil {",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived while the world's values grew with the record number:
		// max(Min, value) was then the newest value, the true maximum.
		ID: "dr-bucket-max-from-min", Claims: []string{"DR-11"},
		What:  "a flush bucket's Max is taken as max(Min, value): right only when values grow in record order",
		File:  "impl/collector/aggregate.go",
		Old:   "max(b.Max, p.Value)",
		New:   "max(b.Min, p.Value)",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived while DR-7's queries drew their bounds at random: a
		// bound on a chunk's newest point came about once in a hundred
		// queries. The world now ends with a query at every point's bounds.
		ID: "dr-query-skips-chunk-ending-at-from", Claims: []string{"DR-7"},
		What:  "Query skips a chunk whose newest point is exactly the range's start, so the points at from are missing",
		File:  "impl/collector/chunks.go",
		Old:   "if c.maxTS < from || c.minTS >= to {",
		New:   "if c.maxTS <= from || c.minTS >= to {",
		Tests: "^TestDR7_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived while every timestamp of DR-11 was after 1970.
		ID: "dr-bucket-start-toward-zero", Claims: []string{"DR-11"},
		What:  "a negative timestamp's bucket starts at the multiple of the width toward zero, not below it",
		File:  "impl/collector/aggregate.go",
		Old:   "\tif m < 0 {\n\t\tm += width\n\t}\n",
		New:   "",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		// The remainder closest to zero that still needs the correction:
		// reached only by stamps 1 ns off the millisecond grid.
		ID: "dr-bucket-start-one-ns-before", Claims: []string{"DR-11"},
		What:  "a timestamp 1 ns before a bucket boundary, before 1970, is put in the bucket after it",
		File:  "impl/collector/aggregate.go",
		Old:   "if m < 0 {",
		New:   "if m < -1 {",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived while DR-11 drained at cutoffs of its own and DR-9's
		// worker flushed on whole minutes, where the lagged instant is a
		// bucket start.
		ID: "dr-flush-cutoff-not-bucket-aligned", Claims: []string{"DR-11"},
		What:  "FlushFunc drains at now - lag itself, not at the start of its bucket: a bucket is split over two flushes",
		File:  "impl/collector/worker.go",
		Old:   "floorTo(now, c.width)",
		New:   "now",
		Tests: "^TestDR11_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived while DR-9's worker was always stopped between cycles.
		ID: "dr-failure-during-stop-not-counted", Claims: []string{"DR-9"},
		What:  "a drain that fails while the worker stops is neither counted nor logged, whatever its error",
		File:  "impl/collector/worker.go",
		Old:   "if err == nil || (w.ctx.Err() != nil && errors.Is(err, w.ctx.Err())) {",
		New:   "if err == nil || w.ctx.Err() != nil {",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		ID: "dr-stop-counted-as-failure", Claims: []string{"DR-9"},
		What:  "a drain that gives up because the worker stops is counted and logged as a failed cycle",
		File:  "impl/collector/worker.go",
		Old:   "if err == nil || (w.ctx.Err() != nil && errors.Is(err, w.ctx.Err())) {",
		New:   "if err == nil || (false && errors.Is(err, w.ctx.Err())) {",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Found by a mutation hunt: DR-9's check read the registry's own
		// snapshot, which quotes label values whatever the exposition
		// prints; it now reads the exposition through the Prometheus parser
		// (series.Scrape).
		ID: "stats-vec-label-unquoted-dr", Claims: []string{"DR-9"},
		What:  "the exposition prints label values unquoted (worker_errors_total{worker=metrics_flush}): not Prometheus text, no scraper reads the flush worker's error counter",
		File:  "impl/stats/stats.go",
		Old:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%q} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		New:   "\t\t\t\tfmt.Fprintf(&b, \"%s{%s=%s} %d\\n\", e.name, e.vec.label, val, e.vec.counts[i].Value())",
		Tests: "^TestDR9_",
		Pkg:   "./scenarios/dr",
	},
	{
		// Survived every simulated check: the simulator runs one task at a
		// time, and the read lock was the only scheduling point in Query.
		// Its checks run under the race detector (Race).
		ID: "dr-query-without-read-lock", Claims: []string{"DR-7"},
		What:  "Query reads the buffered map without the read lock: a data race with every record and drain",
		File:  "impl/collector/collector.go",
		Old:   "\tc.data.RLock()\n\tdefer c.data.RUnlock()\n\ts := c.series[key]",
		New:   "\ts := c.series[key]",
		Tests: "^TestDR7_RealGoroutinesRaceFree$",
		Pkg:   "./scenarios/dr",
		Race:  true,
	},
}

// drSites are where impl encodes the DR bounds of the claims table.
var drSites = []Site{
	// The chunk size, and the comparison that closes a full chunk.
	{Claim: "DR-6", Bound: "chunk points", File: "impl/collector/chunks.go",
		Old: "const ChunkPoints = 1024", Literal: "1024", Tests: "^TestDR6_", Pkg: "./scenarios/dr"},
	{Claim: "DR-6", Bound: "chunk points", File: "impl/collector/chunks.go",
		Old:     "if t == nil || len(t.pts) >= ChunkPoints {",
		Lenient: "if t == nil || len(t.pts) > ChunkPoints {", Tests: "^TestDR6_", Pkg: "./scenarios/dr"},
	// A prune copies at most one straddling chunk per key: a wider chunk
	// is a wider copy.
	{Claim: "DR-10", Bound: "copied per key", File: "impl/collector/chunks.go",
		Old: "const ChunkPoints = 1024", Literal: "1024", Tests: "^TestDR10_", Pkg: "./scenarios/dr"},
	// The cutoff rule: a point at the cutoff is kept.
	{Claim: "DR-1", Bound: "points on the wrong side of the cutoff", File: "impl/collector/chunks.go",
		Old:     "return ts < cutoff // DR-1: drained iff TS < cutoff",
		Lenient: "return ts <= cutoff // DR-1: drained iff TS < cutoff", Tests: "^TestDR1_", Pkg: "./scenarios/dr"},
}

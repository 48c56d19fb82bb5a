package checks

import (
	"fmt"

	"github.com/windtunnel/windtunnel/model"
)

// This file judges the collector's chunks as inspections saw them at every
// write-lock section (WriteSection.Before and After). These figures are
// measured from outside the collector's code, which no counter of the
// collector enters.
//
// A chunk is known by its identity and by its backing array's. A point that
// is, after a section, in an array it was in before has not been copied. A
// point in an array no inspection had seen before the section was copied (or
// written) since the last inspection. Inspections happen only at lock
// sections. A drain's split runs without the lock on a map that is not live,
// so it is seen through what its put-back installs. The kept halves of the
// chunks that straddled the cutoff are new arrays the split made. Every other
// new array that the put-back installs was made while the put-back held the
// lock.

// ChunkFacts is what the inspections saw of the chunks (DR-6).
type ChunkFacts struct {
	// Sections counts the write sections inspected before and after.
	Sections int
	// Observed counts chunk observations (a chunk counts once per
	// inspection that saw it).
	Observed int64
	// Largest is the most points seen in one chunk, LargestAt where.
	Largest   int
	LargestAt string
	// BoundsWrong counts chunks whose stored oldest/newest timestamps were
	// not those of their points; Empty chunks with no points.
	BoundsWrong, Empty int64
	// Records counts the record sections inspected; MaxReallocated is the
	// most chunks one record reallocated or opened.
	Records        int
	MaxReallocated int
}

// DrainOutside is what the inspections saw of one drain's two sections.
type DrainOutside struct {
	// Buffered is the points in the live map when the swap took the lock.
	Buffered int64
	// SwapTouched is the points whose chunks the swap's section changed in
	// the map it swapped out (0: the swap touched no point).
	SwapTouched int64
	// Relinked is the points of the chunks that were live when the put-back
	// took the lock (those recorded during the split) and that it relinked
	// with their arrays: the points moved under the lock.
	Relinked int64
	// MovedWhole is the kept points the put-back installed in arrays they
	// were in before the swap (chunks the split moved whole).
	MovedWhole int64
	// Straddling and StraddlingPoints count the chunks live at the swap whose
	// points lay on both sides of the cutoff. SplitKept counts the points of
	// the new chunks the put-back installed that are exactly the kept part of
	// one of them (the split's copies).
	Straddling, StraddlingPoints, SplitKept int64
	// NotMovedWhole is the points of chunks live at the swap entirely at or
	// after the cutoff that the put-back did not install in their arrays.
	NotMovedWhole int64
	// CopiedUnderLock is the points the drain copied or rewrote while it
	// held the write lock: SwapTouched, plus the points of new arrays the
	// put-back installed that no split explains, plus points written into
	// known arrays.
	CopiedUnderLock int64
	// Witness describes the first copy under the lock.
	Witness string
}

// PruneFacts is what the inspections saw of one prune (DR-10).
type PruneFacts struct {
	Op CollectorOp
	// Buffered is the points live when the prune took the lock.
	Buffered int64
	Keys     []PruneKeyFacts
	// CopiedNotStraddling is the points of chunks the prune copied that
	// did not straddle its cutoff.
	CopiedNotStraddling int64
	Witness             string
}

// PruneKeyFacts is one key of a prune.
type PruneKeyFacts struct {
	Key string
	// Chunks and Points are the key's at the prune's acquisition;
	// Straddling and StraddlingPoints the chunks whose points lay on both
	// sides of the cutoff.
	Chunks, Points, Straddling, StraddlingPoints int64
	// Copied is the points of the chunks whose points the prune put in new
	// arrays (or rewrote): the chunks it copied under the lock, CopiedChunks
	// of them.
	Copied, CopiedChunks int64
}

// CheckChunks judges the inspected chunks of a history whose operations
// CheckCollector matched to the lock log. claimedBy maps a write sequence
// number to op index + 1, -1 for a preloaded point, 0 for a drain's. It
// checks chunk sizes and bounds at every inspection (DR-6), reallocations per
// record (DR-6), what each drain copied under the lock (DR-2, DR-6) and what
// each prune copied (DR-10). Sections that were not inspected are skipped.
func CheckChunks(r *CollectorReport, h *CollectorHistory, lim CollectorLimits, claimedBy []int) {
	cf := &r.Chunks
	verified := map[boundsKey]bool{} // looked up only
	// look inspects one layout; at names it ("at write %d's release" and
	// the write), formatted only for a finding: a history has a lock
	// section per record, most of them not inspected.
	look := func(at string, seq int64, l *Layout) {
		if l == nil {
			return
		}
		where := fmt.Sprintf(at, seq)
		for _, s := range l.Series {
			for i, c := range s.Chunks {
				cf.Observed++
				n := len(c.Points)
				if n > cf.Largest {
					cf.Largest, cf.LargestAt = n, fmt.Sprintf("%s: key %s chunk %d", where, s.Key, i)
				}
				switch {
				case n == 0:
					cf.Empty++
					r.add("DR-6", "%s: key %s: chunk %d holds no points", where, s.Key, i)
					continue
				case n > lim.ChunkPoints:
					r.add("DR-6", "%s: key %s: chunk %d holds %d points, more than %d", where, s.Key, i, n, lim.ChunkPoints)
				}
				k := boundsKey{c.Array, n, c.MinTS, c.MaxTS}
				if verified[k] {
					continue
				}
				verified[k] = true
				if lo, hi := chunkBounds(c.Points); lo != c.MinTS || hi != c.MaxTS {
					cf.BoundsWrong++
					r.add("DR-6", "%s: key %s: chunk %d stores the bounds [%s, %s], its %d points span [%s, %s]",
						where, s.Key, i, tsString(c.MinTS), tsString(c.MaxTS), n, tsString(lo), tsString(hi))
				}
			}
		}
	}
	for i, w := range h.Writes {
		seq := int64(i + 1)
		look("at write %d's acquisition", seq, w.Before)
		look("at write %d's release", seq, w.After)
		look("in the map write %d swapped out, at its release", seq, w.OldAfter)
		if w.Before == nil || w.After == nil {
			continue
		}
		cf.Sections++
		if j := claimedBy[seq]; j > 0 {
			switch op := h.Ops[j-1]; op.Kind {
			case CollectorRecord:
				cf.Records++
				n := reallocated(w.Before, w.After)
				cf.MaxReallocated = max(cf.MaxReallocated, n)
				if n > 1 {
					r.add("DR-6", "%s reallocated or opened %d chunks under the write lock, want at most one", op, n)
				}
			case CollectorPrune:
				r.Prunes = append(r.Prunes, prunedChunks(r, op, w))
			}
		}
	}
	for i := range r.Drains {
		drainedChunks(r, h, &r.Drains[i])
	}
}

type boundsKey struct {
	array        uintptr
	n            int
	minTS, maxTS int64
}

func chunkBounds(pts []ChunkPoint) (lo, hi int64) {
	lo, hi = pts[0].TS, pts[0].TS
	for _, p := range pts[1:] {
		lo, hi = min(lo, p.TS), max(hi, p.TS)
	}
	return lo, hi
}

// straddles reports whether a chunk's points lie on both sides of cutoff.
func straddles(pts []ChunkPoint, cutoff int64) bool {
	var older, younger bool
	for _, p := range pts {
		if model.Drained(p.TS, cutoff) {
			older = true
		} else {
			younger = true
		}
	}
	return older && younger
}

// keptPart is the points of pts at or after cutoff, in order.
func keptPart(pts []ChunkPoint, cutoff int64) []ChunkPoint {
	var out []ChunkPoint
	for _, p := range pts {
		if !model.Drained(p.TS, cutoff) {
			out = append(out, p)
		}
	}
	return out
}

type chunkRef struct {
	key   string
	chunk *ChunkLayout
}

// arrays indexes the chunks of layouts by backing array.
func arrays(ls ...*Layout) map[uintptr]chunkRef {
	out := map[uintptr]chunkRef{}
	for _, l := range ls {
		if l == nil {
			continue
		}
		for _, s := range l.Series {
			for i := range s.Chunks {
				out[s.Chunks[i].Array] = chunkRef{s.Key, &s.Chunks[i]}
			}
		}
	}
	return out
}

// reallocated counts the chunks of after that are not in before with the
// same array: opened, or grown into a new array.
func reallocated(before, after *Layout) int {
	known := arrays(before)
	n := 0
	for _, s := range after.Series {
		for _, c := range s.Chunks {
			if _, ok := known[c.Array]; !ok {
				n++
			}
		}
	}
	return n
}

// prunedChunks accounts for one prune's section.
func prunedChunks(r *CollectorReport, op CollectorOp, w WriteSection) PruneFacts {
	pf := PruneFacts{Op: op, Buffered: w.Before.Points()}
	cutoff := op.In.Cutoff
	before := arrays(w.Before)
	// source maps each point value live before to its chunk; built only if
	// the prune made new arrays.
	var source map[float64]*ChunkLayout
	perKey := map[string]*PruneKeyFacts{} // looked up only
	for _, s := range w.Before.Series {
		kf := PruneKeyFacts{Key: s.Key}
		for _, c := range s.Chunks {
			kf.Chunks++
			kf.Points += int64(len(c.Points))
			if straddles(c.Points, cutoff) {
				kf.Straddling++
				kf.StraddlingPoints += int64(len(c.Points))
			}
		}
		pf.Keys = append(pf.Keys, kf)
	}
	for i := range pf.Keys {
		perKey[pf.Keys[i].Key] = &pf.Keys[i]
	}
	copied := map[*ChunkLayout]bool{} // looked up only
	charge := func(src *ChunkLayout, key string) {
		if copied[src] {
			return
		}
		copied[src] = true
		kf := perKey[key]
		if kf == nil {
			return
		}
		kf.Copied += int64(len(src.Points))
		kf.CopiedChunks++
		if !straddles(src.Points, cutoff) {
			pf.CopiedNotStraddling += int64(len(src.Points))
			if pf.Witness == "" {
				pf.Witness = fmt.Sprintf("%s copied a chunk of key %s with %d points that does not straddle its cutoff", op, key, len(src.Points))
			}
		}
	}
	for _, s := range w.After.Series {
		for _, c := range s.Chunks {
			if b, ok := before[c.Array]; ok && len(b.chunk.Points) == len(c.Points) {
				continue // moved whole, in place
			} else if ok {
				charge(b.chunk, b.key) // rewritten in its array
				continue
			}
			if source == nil {
				// The points of a new array came from chunks whose arrays
				// the prune did not keep: index only those.
				kept := map[uintptr]bool{} // looked up only
				for _, as := range w.After.Series {
					for _, ac := range as.Chunks {
						kept[ac.Array] = true
					}
				}
				source = map[float64]*ChunkLayout{}
				for _, bs := range w.Before.Series {
					for i := range bs.Chunks {
						if kept[bs.Chunks[i].Array] {
							continue
						}
						for _, p := range bs.Chunks[i].Points {
							source[p.Value] = &bs.Chunks[i]
						}
					}
				}
			}
			for _, p := range c.Points {
				if src := source[p.Value]; src != nil {
					charge(src, s.Key)
				}
			}
		}
	}
	if pf.CopiedNotStraddling > 0 {
		r.add("DR-10", "%s (%d points of chunks that do not straddle the cutoff copied under the write lock)", pf.Witness, pf.CopiedNotStraddling)
	}
	return pf
}

// drainedChunks accounts for one drain's two sections.
func drainedChunks(r *CollectorReport, h *CollectorHistory, f *DrainFacts) {
	if f.Swap < 1 || f.Put > int64(len(h.Writes)) {
		return
	}
	sw, pb := h.Writes[f.Swap-1], h.Writes[f.Put-1]
	if sw.Before == nil || sw.After == nil || pb.Before == nil || pb.After == nil {
		return
	}
	o := &DrainOutside{Buffered: sw.Before.Points()}
	f.Outside = o
	cutoff := f.Op.In.Cutoff
	note := func(format string, a ...any) {
		if o.Witness == "" {
			o.Witness = fmt.Sprintf(format, a...)
		}
	}
	// The swap: the map it took out must be as it was at the acquisition.
	out := sw.OldAfter
	if out == nil {
		out = sw.After // the live map was not replaced: compare it
	}
	outs := map[string]*SeriesLayout{} // looked up only
	for i := range out.Series {
		outs[out.Series[i].Key] = &out.Series[i]
	}
	for _, s := range sw.Before.Series {
		o2 := outs[s.Key]
		for i, c := range s.Chunks {
			if o2 != nil && i < len(o2.Chunks) && o2.Chunks[i].ID == c.ID && o2.Chunks[i].Array == c.Array && len(o2.Chunks[i].Points) == len(c.Points) {
				continue
			}
			o.SwapTouched += int64(len(c.Points))
			note("%s: while its first swap held the write lock, chunk %d of key %s (%d points) was relinked, copied or emptied", f.Op, i, s.Key, len(c.Points))
		}
	}
	// The split's expected copies: the kept part of each straddling chunk.
	type half struct {
		key string
		pts []ChunkPoint
	}
	var halves []half
	wholeKept := map[uintptr]int{} // array -> points, of chunks entirely kept
	for _, s := range sw.Before.Series {
		for _, c := range s.Chunks {
			switch {
			case straddles(c.Points, cutoff):
				o.Straddling++
				o.StraddlingPoints += int64(len(c.Points))
				halves = append(halves, half{s.Key, keptPart(c.Points, cutoff)})
			case len(c.Points) > 0 && !model.Drained(chunkMin(c.Points), cutoff):
				wholeKept[c.Array] = len(c.Points)
			}
		}
	}
	recent := arrays(pb.Before)
	buffered := arrays(sw.Before)
	used := make([]bool, len(halves))
	installed := map[uintptr]bool{} // looked up only
	for _, s := range pb.After.Series {
		for _, c := range s.Chunks {
			n := int64(len(c.Points))
			installed[c.Array] = true
			if rc, ok := recent[c.Array]; ok {
				o.Relinked += min(n, int64(len(rc.chunk.Points)))
				if extra := n - int64(len(rc.chunk.Points)); extra > 0 {
					o.CopiedUnderLock += extra
					note("%s: its put-back wrote %d points into a chunk of key %s recorded during the split", f.Op, extra, s.Key)
				}
				continue
			}
			if bc, ok := buffered[c.Array]; ok {
				before := int64(len(bc.chunk.Points))
				if n == before {
					o.MovedWhole += n
				} else {
					o.CopiedUnderLock += n
					note("%s: its put-back installed a chunk of key %s whose array held %d points before the swap and holds %d now", f.Op, s.Key, before, n)
				}
				continue
			}
			explained := false
			for i, hf := range halves {
				if !used[i] && hf.key == s.Key && equalPoints(hf.pts, c.Points) {
					used[i], explained = true, true
					o.SplitKept += n
					break
				}
			}
			if !explained {
				o.CopiedUnderLock += n
				note("%s: its put-back installed a new chunk of key %s with %d points that is not the kept part of a chunk straddling the cutoff: copied while it held the write lock", f.Op, s.Key, n)
			}
		}
	}
	for a, n := range wholeKept { //windtunnel:unordered a sum
		if !installed[a] {
			o.NotMovedWhole += int64(n)
		}
	}
	o.CopiedUnderLock += o.SwapTouched
	if o.CopiedUnderLock > 0 {
		r.add("DR-2", "%s (%d points copied under the write lock, %d buffered)", o.Witness, o.CopiedUnderLock, o.Buffered)
	}
	if want := f.RecordsBetween - f.PrunedBetween; o.Relinked != want {
		r.add("DR-2", "%s: its put-back relinked %d points recorded during the split, the clients recorded %d between its two acquisitions (%d pruned meanwhile)",
			f.Op, o.Relinked, f.RecordsBetween, f.PrunedBetween)
	}
	if o.NotMovedWhole > 0 {
		r.add("DR-6", "%s: %d points of chunks entirely at or after the cutoff were not put back in their arrays: only chunks straddling the cutoff may be split", f.Op, o.NotMovedWhole)
	}
}

func chunkMin(pts []ChunkPoint) int64 {
	lo, _ := chunkBounds(pts)
	return lo
}

func equalPoints(a, b []ChunkPoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

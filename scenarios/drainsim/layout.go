package drainsim

import (
	"slices"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
)

// layout is the expected chunk layout of the collector (DR-6), replayed in
// lock order next to the sequential model: per key, runs of at most
// collector.ChunkPoints points in recorded order with their oldest and
// newest timestamps. A record appends to the last chunk or opens one; a
// split moves a chunk whole when it lies on one side of the cutoff and
// divides it in two otherwise. The collector's DrainStats must count exactly
// what this layout predicts.
type layout struct {
	live map[string]*lseries
}

type lchunk struct {
	pts          []model.Point
	minTS, maxTS int64
}

type lseries struct {
	chunks []*lchunk
	points int64
}

func newLayout() *layout { return &layout{live: map[string]*lseries{}} }

func (s *lseries) add(p model.Point) {
	n := len(s.chunks)
	if n == 0 || len(s.chunks[n-1].pts) >= collector.ChunkPoints {
		s.chunks = append(s.chunks, &lchunk{minTS: p.TS, maxTS: p.TS})
		n++
	}
	c := s.chunks[n-1]
	c.pts = append(c.pts, p)
	c.minTS, c.maxTS = min(c.minTS, p.TS), max(c.maxTS, p.TS)
	s.points++
}

func (s *lseries) link(c *lchunk) {
	s.chunks = append(s.chunks, c)
	s.points += int64(len(c.pts))
}

// splitStats is what one split is expected to report.
type splitStats struct {
	chunksMoved, chunksSplit, pointsCopied int64
}

func (s *lseries) split(cutoff int64) (drained, kept *lseries, st splitStats) {
	drained, kept = &lseries{}, &lseries{}
	for _, c := range s.chunks {
		switch {
		case model.Drained(c.maxTS, cutoff):
			drained.link(c)
			st.chunksMoved++
		case !model.Drained(c.minTS, cutoff):
			kept.link(c)
			st.chunksMoved++
		default:
			d, k := &lchunk{}, &lchunk{}
			for _, p := range c.pts {
				if model.Drained(p.TS, cutoff) {
					d.pts = append(d.pts, p)
				} else {
					k.pts = append(k.pts, p)
				}
			}
			d.minTS, d.maxTS = tsBounds(d.pts)
			k.minTS, k.maxTS = tsBounds(k.pts)
			drained.link(d)
			kept.link(k)
			st.chunksSplit++
			st.pointsCopied += int64(len(c.pts))
		}
	}
	return drained, kept, st
}

func tsBounds(pts []model.Point) (lo, hi int64) {
	lo, hi = pts[0].TS, pts[0].TS
	for _, p := range pts[1:] {
		lo, hi = min(lo, p.TS), max(hi, p.TS)
	}
	return lo, hi
}

func (s *lseries) appendTo(dst []model.Point) []model.Point {
	for _, c := range s.chunks {
		dst = append(dst, c.pts...)
	}
	return dst
}

func (l *layout) record(p model.Point) {
	s := l.live[p.Key]
	if s == nil {
		s = &lseries{}
		l.live[p.Key] = s
	}
	s.add(p)
}

func (l *layout) keys() []string {
	keys := make([]string, 0, len(l.live))
	//windtunnel:unordered sorted below
	for k := range l.live {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// prune splits every live key and drops what is older than cutoff; it
// returns how many points it dropped.
func (l *layout) prune(cutoff int64) int64 {
	var n int64
	for _, k := range l.keys() {
		d, kept, _ := l.live[k].split(cutoff)
		n += d.points
		if kept.points == 0 {
			delete(l.live, k)
		} else {
			l.live[k] = kept
		}
	}
	return n
}

// swap is a drain's first step and its split: the live map goes out and is
// split; it returns the kept series and the stats the drain must report.
func (l *layout) swap(cutoff int64) (kept map[string]*lseries, st collector.DrainStats) {
	kept = map[string]*lseries{}
	for _, k := range l.keys() {
		s := l.live[k]
		st.Buffered += s.points
		d, kp, one := s.split(cutoff)
		st.Drained += d.points
		st.Kept += kp.points
		st.ChunksMoved += one.chunksMoved
		st.ChunksSplit += one.chunksSplit
		st.PointsCopied += one.pointsCopied
		if kp.points > 0 {
			kept[k] = kp
		}
	}
	st.Keys = int64(len(l.live))
	l.live = map[string]*lseries{}
	return kept, st
}

// putBack is a drain's second step: every live key's chunks go after its
// kept ones. It completes st with what was recorded during the split.
func (l *layout) putBack(kept map[string]*lseries, st *collector.DrainStats) {
	for _, k := range l.keys() {
		recent := l.live[k]
		st.RecordedDuringSplit += recent.points
		st.ChunksRecordedDuringSplit += int64(len(recent.chunks))
		s := kept[k]
		if s == nil {
			s = &lseries{}
			kept[k] = s
		}
		s.chunks = append(s.chunks, recent.chunks...)
		s.points += recent.points
	}
	st.MovedUnderLock = st.RecordedDuringSplit
	st.WriteLocks = 2
	l.live = kept
}

// points returns the live points of key, or of every key in key order when
// key is "", in chunk order.
func (l *layout) points(key string) []model.Point {
	if key != "" {
		if s := l.live[key]; s != nil {
			return s.appendTo(nil)
		}
		return nil
	}
	var out []model.Point
	for _, k := range l.keys() {
		out = l.live[k].appendTo(out)
	}
	return out
}

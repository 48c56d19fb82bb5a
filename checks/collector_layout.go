package checks

import (
	"slices"

	"github.com/windtunnel/windtunnel/model"
)

// chunkModel is the chunk layout the source text describes (DR-6),
// replayed in lock order next to the sequential model: per key, runs of at
// most limit points in recorded order with their oldest and newest
// timestamps. A record appends to the last chunk or opens one; a split moves
// a chunk whole when it lies on one side of the cutoff and divides it in two
// otherwise. It predicts what a drain must report about itself and what a
// query inside a split sees (the live map).
type chunkModel struct {
	limit int
	live  map[string]*mseries
}

type mchunk struct {
	pts          []model.Point
	minTS, maxTS int64
}

type mseries struct {
	chunks []*mchunk
	points int64
}

func newChunkModel(limit int) *chunkModel {
	return &chunkModel{limit: limit, live: map[string]*mseries{}}
}

func (m *chunkModel) add(s *mseries, p model.Point) {
	n := len(s.chunks)
	if n == 0 || len(s.chunks[n-1].pts) >= m.limit {
		s.chunks = append(s.chunks, &mchunk{minTS: p.TS, maxTS: p.TS})
		n++
	}
	c := s.chunks[n-1]
	c.pts = append(c.pts, p)
	c.minTS, c.maxTS = min(c.minTS, p.TS), max(c.maxTS, p.TS)
	s.points++
}

func (s *mseries) link(c *mchunk) {
	s.chunks = append(s.chunks, c)
	s.points += int64(len(c.pts))
}

// splitCounts is what one split is expected to report.
type splitCounts struct {
	chunksMoved, chunksSplit, pointsCopied int64
}

func (s *mseries) split(cutoff int64) (drained, kept *mseries, st splitCounts) {
	drained, kept = &mseries{}, &mseries{}
	for _, c := range s.chunks {
		switch {
		case model.Drained(c.maxTS, cutoff):
			drained.link(c)
			st.chunksMoved++
		case !model.Drained(c.minTS, cutoff):
			kept.link(c)
			st.chunksMoved++
		default:
			d, k := &mchunk{}, &mchunk{}
			for _, p := range c.pts {
				if model.Drained(p.TS, cutoff) {
					d.pts = append(d.pts, p)
				} else {
					k.pts = append(k.pts, p)
				}
			}
			d.minTS, d.maxTS = pointBounds(d.pts)
			k.minTS, k.maxTS = pointBounds(k.pts)
			drained.link(d)
			kept.link(k)
			st.chunksSplit++
			st.pointsCopied += int64(len(c.pts))
		}
	}
	return drained, kept, st
}

func pointBounds(pts []model.Point) (lo, hi int64) {
	lo, hi = pts[0].TS, pts[0].TS
	for _, p := range pts[1:] {
		lo, hi = min(lo, p.TS), max(hi, p.TS)
	}
	return lo, hi
}

func (s *mseries) appendTo(dst []model.Point) []model.Point {
	for _, c := range s.chunks {
		dst = append(dst, c.pts...)
	}
	return dst
}

func (m *chunkModel) record(p model.Point) {
	s := m.live[p.Key]
	if s == nil {
		s = &mseries{}
		m.live[p.Key] = s
	}
	m.add(s, p)
}

func (m *chunkModel) keys() []string {
	keys := make([]string, 0, len(m.live))
	//windtunnel:unordered sorted below
	for k := range m.live {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// prune splits every live key and drops what is older than cutoff; it
// returns how many points it dropped.
func (m *chunkModel) prune(cutoff int64) int64 {
	var n int64
	for _, k := range m.keys() {
		d, kept, _ := m.live[k].split(cutoff)
		n += d.points
		if kept.points == 0 {
			delete(m.live, k)
		} else {
			m.live[k] = kept
		}
	}
	return n
}

// swap is a drain's first step and its split: the live map goes out and is
// split; it returns the kept series and the counts the drain must report.
func (m *chunkModel) swap(cutoff int64) (kept map[string]*mseries, st DrainCounts) {
	kept = map[string]*mseries{}
	for _, k := range m.keys() {
		s := m.live[k]
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
	st.Keys = int64(len(m.live))
	m.live = map[string]*mseries{}
	return kept, st
}

// putBack is a drain's second step: every live key's chunks go after its
// kept ones. It completes st with what was recorded during the split and
// returns, per key put back, whether it had kept points and points recorded
// during the split.
func (m *chunkModel) putBack(kept map[string]*mseries, st *DrainCounts) (afterKept, newKeys int) {
	for _, k := range m.keys() {
		recent := m.live[k]
		st.RecordedDuringSplit += recent.points
		st.ChunksRecordedDuringSplit += int64(len(recent.chunks))
		s := kept[k]
		if s == nil {
			s = &mseries{}
			kept[k] = s
			newKeys++
		} else {
			afterKept++
		}
		s.chunks = append(s.chunks, recent.chunks...)
		s.points += recent.points
	}
	st.MovedUnderLock = st.RecordedDuringSplit
	st.WriteLocks = 2
	m.live = kept
	return afterKept, newKeys
}

// points returns the live points of key, or of every key in key order when
// key is "", in chunk order.
func (m *chunkModel) points(key string) []model.Point {
	if key != "" {
		if s := m.live[key]; s != nil {
			return s.appendTo(nil)
		}
		return nil
	}
	var out []model.Point
	for _, k := range m.keys() {
		out = m.live[k].appendTo(out)
	}
	return out
}

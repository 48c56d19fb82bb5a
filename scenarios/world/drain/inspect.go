package drain

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/collector"
)

// inspector reads the collector's buffered map from outside its code, by
// reflection over its unexported fields: for each key, the chunk list, and
// for each chunk its identity, its backing array's identity, its stored
// bounds and its points. The collector counts nothing for it and cannot
// tell it is being watched. Its layout (a map of key -> list header with
// head, tail, points, chunks; chunks with pts, minTS, maxTS, next) is
// checked when the inspector is built, so that a change to it fails the
// world loudly instead of reading garbage.
//
// Chunks and arrays it has seen are kept reachable, so that an address
// never names two objects in one run, and each array's points are copied
// once and extended as the array fills (an inspection that sees an array
// with more points than before copies only the new ones).
type inspector struct {
	c      unsafe.Pointer // *collector.Collector
	series uintptr        // offset of Collector.series
	mapTyp reflect.Type

	head, points, chunks uintptr // offsets in a series header
	pts, minTS, maxTS    uintptr // offsets in a chunk
	next                 uintptr

	alive  map[uintptr]unsafe.Pointer // chunks and arrays seen, kept reachable; looked up only
	copies map[uintptr][]checks.ChunkPoint
}

// mapRef is a reference to one map object of the collector's.
type mapRef struct{ v reflect.Value }

func (m mapRef) id() uintptr {
	if !m.v.IsValid() {
		return 0
	}
	return uintptr(m.v.UnsafePointer())
}

func field(t reflect.Type, name string, kind reflect.Kind) (reflect.StructField, error) {
	f, ok := t.FieldByName(name)
	switch {
	case !ok:
		return f, fmt.Errorf("drain: the collector's layout changed: %v has no field %s", t, name)
	case f.Type.Kind() != kind:
		return f, fmt.Errorf("drain: the collector's layout changed: %v.%s is a %v, not a %v", t, name, f.Type.Kind(), kind)
	}
	return f, nil
}

func newInspector(c *collector.Collector) (*inspector, error) {
	ct := reflect.TypeOf(c).Elem()
	sf, err := field(ct, "series", reflect.Map)
	if err != nil {
		return nil, err
	}
	if sf.Type.Key().Kind() != reflect.String || sf.Type.Elem().Kind() != reflect.Pointer {
		return nil, fmt.Errorf("drain: the collector's layout changed: series is a %v", sf.Type)
	}
	st := sf.Type.Elem().Elem()
	ins := &inspector{c: unsafe.Pointer(c), series: sf.Offset, mapTyp: sf.Type,
		alive: map[uintptr]unsafe.Pointer{}, copies: map[uintptr][]checks.ChunkPoint{}}
	head, err := field(st, "head", reflect.Pointer)
	if err != nil {
		return nil, err
	}
	points, err := field(st, "points", reflect.Int64)
	if err != nil {
		return nil, err
	}
	chunks, err := field(st, "chunks", reflect.Int64)
	if err != nil {
		return nil, err
	}
	cht := head.Type.Elem()
	pts, err := field(cht, "pts", reflect.Slice)
	if err != nil {
		return nil, err
	}
	if pts.Type.Elem() != reflect.TypeFor[collector.Point]() {
		return nil, fmt.Errorf("drain: the collector's layout changed: chunk.pts is a %v", pts.Type)
	}
	minTS, err := field(cht, "minTS", reflect.Int64)
	if err != nil {
		return nil, err
	}
	maxTS, err := field(cht, "maxTS", reflect.Int64)
	if err != nil {
		return nil, err
	}
	next, err := field(cht, "next", reflect.Pointer)
	if err != nil {
		return nil, err
	}
	if next.Type != head.Type {
		return nil, fmt.Errorf("drain: the collector's layout changed: chunk.next is a %v", next.Type)
	}
	ins.head, ins.points, ins.chunks = head.Offset, points.Offset, chunks.Offset
	ins.pts, ins.minTS, ins.maxTS, ins.next = pts.Offset, minTS.Offset, maxTS.Offset, next.Offset
	return ins, nil
}

// live returns the collector's live buffered map.
func (ins *inspector) live() mapRef {
	v := reflect.NewAt(ins.mapTyp, unsafe.Add(ins.c, ins.series)).Elem()
	// A copy of the map reference, so that a later swap of the field does
	// not change what this one names.
	out := reflect.New(ins.mapTyp).Elem()
	out.Set(v)
	return mapRef{out}
}

// maxChunks bounds the walk of one list: a corrupted list cannot loop
// forever.
const maxChunks = 1 << 24

// walk reads every key of m.
func (ins *inspector) walk(m mapRef) *checks.Layout {
	if !m.v.IsValid() || m.v.IsNil() {
		return &checks.Layout{}
	}
	l := &checks.Layout{Map: m.id()}
	keys := make([]string, 0, m.v.Len())
	headers := map[string]unsafe.Pointer{} // looked up only
	for it := m.v.MapRange(); it.Next(); {
		k := it.Key().String()
		keys = append(keys, k)
		headers[k] = it.Value().UnsafePointer()
	}
	slices.Sort(keys)
	for _, k := range keys {
		sp := headers[k]
		s := checks.SeriesLayout{Key: k, Header: uintptr(sp)}
		if sp == nil {
			l.Series = append(l.Series, s)
			continue
		}
		s.CountedPoints = *(*int64)(unsafe.Add(sp, ins.points))
		s.CountedChunks = *(*int64)(unsafe.Add(sp, ins.chunks))
		cp := *(*unsafe.Pointer)(unsafe.Add(sp, ins.head))
		for i := 0; cp != nil && i < maxChunks; i++ {
			pts := *(*[]collector.Point)(unsafe.Add(cp, ins.pts))
			ch := checks.ChunkLayout{ID: uintptr(cp), Cap: cap(pts),
				MinTS: *(*int64)(unsafe.Add(cp, ins.minTS)), MaxTS: *(*int64)(unsafe.Add(cp, ins.maxTS))}
			ins.keep(cp)
			if cap(pts) > 0 {
				arr := unsafe.Pointer(unsafe.SliceData(pts))
				ch.Array = uintptr(arr)
				ins.keep(arr)
				ch.Points = ins.contents(ch.Array, pts)
			}
			s.Chunks = append(s.Chunks, ch)
			cp = *(*unsafe.Pointer)(unsafe.Add(cp, ins.next))
		}
		l.Series = append(l.Series, s)
	}
	return l
}

func (ins *inspector) keep(p unsafe.Pointer) {
	if _, ok := ins.alive[uintptr(p)]; !ok {
		ins.alive[uintptr(p)] = p
	}
}

// contents returns the points of pts as copied so far for its array,
// extending the copy with points the array gained since.
func (ins *inspector) contents(array uintptr, pts []collector.Point) []checks.ChunkPoint {
	c := ins.copies[array]
	if len(c) > 0 && (len(pts) < len(c) || pts[0].Value != c[0].Value || pts[len(c)-1].Value != c[len(c)-1].Value) {
		c = nil // the array was rewritten in place: copy it again
	}
	for _, p := range pts[len(c):] {
		c = append(c, checks.ChunkPoint{TS: p.TS, Value: p.Value})
	}
	ins.copies[array] = c
	return c[:len(pts):len(pts)]
}

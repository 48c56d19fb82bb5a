package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/sim/record"
)

// Layout, in pixels. A lane is a row of markers (notes, faults, messages)
// above the tracks of its bars: operations, then locks, then statements.
const (
	labelW  = 190 // the lane names' column, kept in view while scrolling
	axisH   = 30  // the axis' row of tick labels
	groupH  = 18  // a pod's header row
	lanePad = 4
	markH   = 16
	trackH  = 16
	barH    = 13
	// maxTracks bounds the tracks of one section: past it bars overlap
	// rather than make a lane a screen tall.
	maxTracks = 8
)

// lane is one row of the chart.
type lane struct {
	key    laneKey
	name   string // its data-lane: the task's name, "world", or the subscriber's
	label  string
	group  string // its pod ("" for none)
	first  int    // its first shape's event, for ordering subscriber lanes
	shapes []int  // the shapes drawn on it, in the record's order
	tracks [nSections]int
	top    int // in the chart
	height int
}

// group is a pod's lanes under one header.
type group struct {
	name  string // "" for a task of no pod: no header
	lanes []*lane
	top   int
}

// podOf is the pod a task's name says it belongs to: what comes before
// its first "/" ("pod1/reader", "net-0/opener"), or a leading "podN-"
// ("pod1-reader"). "" for none.
func podOf(name string) string {
	if i := strings.IndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	if strings.HasPrefix(name, "pod") {
		if i := strings.IndexByte(name, '-'); i > 3 {
			return name[:i]
		}
	}
	return ""
}

func taskName(rec *record.Record, id int32) string {
	switch {
	case id == -1:
		return "world"
	case id >= 0 && int(id) < len(rec.Tasks):
		return rec.Tasks[id]
	}
	return fmt.Sprintf("task %d", id)
}

// layout makes the lanes of the shapes drawn, groups them by pod, stacks
// each lane's bars in tracks and gives every lane its place. The world's
// lane comes first, then tasks in the order they were spawned (a pod's
// lanes together, where its first task was), then subscribers.
func layout(d *drawing, drawn []int, lo int) ([]*group, map[laneKey]*lane) {
	lanes := map[laneKey]*lane{} // lookups only; order comes from the slices below
	var order []*lane
	for _, i := range drawn {
		s := &d.shapes[i]
		l := lanes[s.lane]
		if l == nil {
			l = &lane{key: s.lane, first: s.s0}
			switch {
			case s.lane.task == -2:
				l.name, l.label = s.lane.sub, "⇢ "+s.lane.sub
			case s.lane.task == -1:
				l.name, l.label = "world", "world"
			default:
				l.name = taskName(d.rec, s.lane.task)
				l.label = l.name
			}
			lanes[s.lane] = l
			order = append(order, l)
		}
		l.shapes = append(l.shapes, i)
	}
	slices.SortStableFunc(order, func(a, b *lane) int {
		if c := cmp.Compare(rank(a.key), rank(b.key)); c != 0 {
			return c
		}
		if a.key.task >= 0 {
			return cmp.Compare(a.key.task, b.key.task)
		}
		return cmp.Compare(a.first, b.first)
	})
	seenName := map[string]int{}
	for _, l := range order {
		seenName[l.name]++
	}
	var groups []*group
	named := map[string]*group{}
	put := func(name string, l *lane) {
		l.group = name
		if name != "" {
			if g := named[name]; g != nil {
				g.lanes = append(g.lanes, l)
				return
			}
		}
		g := &group{name: name, lanes: []*lane{l}}
		if name != "" {
			named[name] = g
		}
		groups = append(groups, g)
	}
	var bus []*lane
	for _, l := range order {
		if l.key.task >= 0 && seenName[l.name] > 1 {
			l.label = fmt.Sprintf("%s #%d", l.name, l.key.task)
		}
		switch {
		case l.key.task == -1:
			put("", l)
		case l.key.task >= 0:
			put(podOf(l.name), l)
		default:
			// A subscriber named after a pod joins its pod's lanes.
			if named[l.name] != nil {
				put(l.name, l)
			} else if p := podOf(l.name); p != "" {
				put(p, l)
			} else {
				bus = append(bus, l)
			}
		}
	}
	for _, l := range bus {
		put("bus subscribers", l)
	}
	for _, l := range order {
		stack(d, l, lo)
	}
	y := axisH
	for _, g := range groups {
		g.top = y
		if g.name != "" {
			y += groupH
		}
		for _, l := range g.lanes {
			l.top = y
			l.height = lanePad + markH + lanePad
			for _, n := range l.tracks {
				l.height += n * trackH
			}
			y += l.height
		}
	}
	return groups, lanes
}

// rank orders the world, then tasks, then subscribers.
func rank(k laneKey) int {
	switch {
	case k.task == -1:
		return 0
	case k.task >= 0:
		return 1
	}
	return 2
}

// stack puts each bar of a lane in the first track of its section that is
// free by the time it starts (by event order, which time follows, so the
// tracks hold on both axes).
func stack(d *drawing, l *lane, lo int) {
	var ends [nSections][]int
	for _, i := range l.shapes {
		s := &d.shapes[i]
		sec := s.kind.section()
		if sec == secMarks {
			continue
		}
		start := max(s.s0, lo)
		t := slices.IndexFunc(ends[sec], func(end int) bool { return end <= start })
		if t < 0 {
			if len(ends[sec]) < maxTracks {
				ends[sec] = append(ends[sec], 0)
			}
			t = len(ends[sec]) - 1
		}
		ends[sec][t] = max(ends[sec][t], s.s1)
		s.track = t
	}
	for sec := range ends {
		l.tracks[sec] = len(ends[sec])
	}
}

// shapeTop is where a shape sits in its lane.
func (l *lane) shapeTop(s *shape) int {
	sec := s.kind.section()
	if sec == secMarks {
		return lanePad + 2
	}
	y := lanePad + markH
	for k := secOps; k < sec; k++ {
		y += l.tracks[k] * trackH
	}
	return y + s.track*trackH + (trackH-barH)/2
}

// markY is the middle of a lane's marker row, in the chart: where arrows
// start and end.
func (l *lane) markY() int { return l.top + lanePad + markH/2 }

package timerwheel_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// fireLog records every firing with the real deadline it had.
type fireLog struct {
	id       int
	real, at time.Time
}

type rItem struct {
	timerwheel.Element
	id   int
	real time.Time
	log  *[]fireLog
	// armedCursor is the wheel's cursor when a setter last scheduled the
	// item: a deadline set behind it is clamped there, so the item is due
	// at the first pass that reaches that tick.
	armedCursor int64
}

func (i *rItem) Deadline() time.Time { return i.real }

func (i *rItem) Expired(now time.Time) {
	*i.log = append(*i.log, fireLog{id: i.id, real: i.real, at: now})
	i.real = time.Time{}
}

// TestWheelProperties drives the wheel with random arms, activity (real
// deadline later, wheel untouched), shortening re-arms, cancels and passes at
// arbitrary instants. Clocks jump by up to three rings, and budgets are
// smaller than the due work. After every step, every live deadline is held no
// later than the real one (TW-1). A pass fires only passed deadlines (TW-2),
// visits each element at most once and examines at most the ring (TW-5). A
// finished pass leaves nothing pending that was due before the current tick
// began (TW-2, TW-4). The exception is an element a setter armed after that
// tick was visited; it is clamped to the next tick.
func TestWheelProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const ring = 8
		w, err := timerwheel.New(origin, time.Second, ring)
		if err != nil {
			t.Fatal(err)
		}
		var log []fireLog
		items := make([]*rItem, rapid.IntRange(1, 12).Draw(t, "items"))
		for i := range items {
			items[i] = &rItem{id: i, log: &log}
		}
		now := origin
		ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
		check := func() {
			live := 0
			for _, it := range items {
				if it.real.IsZero() {
					continue
				}
				live++
				if v := w.Check(it); v != timerwheel.OK {
					t.Fatalf("item %d: %v (real %v)", it.id, v, it.real.Sub(origin))
				}
			}
			if w.Len() != live {
				t.Fatalf("wheel holds %d, %d live", w.Len(), live)
			}
		}
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			it := items[rapid.IntRange(0, len(items)-1).Draw(t, "item")]
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0: // a setter: any deadline, through Schedule
				it.real = now.Add(ms(rapid.IntRange(-2000, 30_000).Draw(t, "in")))
				it.armedCursor = w.Cursor()
				w.Schedule(it, it.real)
			case 1: // activity: later, wheel untouched
				if !it.real.IsZero() {
					it.real = it.real.Add(ms(rapid.IntRange(0, 20_000).Draw(t, "push")))
				}
			case 2:
				it.real = time.Time{}
				w.Cancel(it)
			default: // time passes, then a pass and its continuations
				jump := rapid.SampledFrom([]int{1, 500, 1000, 3000, 9000, 25_000}).Draw(t, "jump")
				now = now.Add(ms(jump))
				budget := rapid.IntRange(1, 6).Draw(t, "budget")
				for c := 0; ; c++ {
					if c > len(items) {
						t.Fatalf("more than %d continuations", len(items))
					}
					before, n := len(log), w.Len()
					p, err := w.Expire(now, budget)
					if err != nil {
						t.Fatal(err)
					}
					if p.Visited > n || p.Visited > budget || p.Buckets > ring {
						t.Fatalf("pass %+v with %d scheduled, budget %d", p, n, budget)
					}
					for _, f := range log[before:] {
						if !f.real.Before(f.at) {
							t.Fatalf("item %d fired at %v, deadline %v not passed", f.id, f.at.Sub(origin), f.real.Sub(origin))
						}
					}
					check()
					if !p.Exhausted {
						break
					}
					now = now.Add(time.Millisecond) // the continuation
				}
				last := w.TickOf(now)
				for _, x := range items {
					if !x.real.IsZero() && x.real.Before(w.TickStart(last)) && x.armedCursor <= last {
						t.Fatalf("item %d due at %v still pending after a finished pass at %v", x.id, x.real.Sub(origin), now.Sub(origin))
					}
				}
			}
			check()
		}
	})
}

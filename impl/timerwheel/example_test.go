package timerwheel_test

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// conn embeds the wheel's element and supplies the real deadline.
type conn struct {
	timerwheel.Element
	name       string
	deadline   time.Time
	idle       time.Duration
	timedOutAt time.Time
}

func (c *conn) Deadline() time.Time { return c.deadline }

func (c *conn) Expired(now time.Time) {
	c.deadline = time.Time{} // the timeout is consumed
	c.timedOutAt = now
	fmt.Printf("%s timed out at +%v\n", c.name, now.Sub(origin))
}

var origin = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// A connection's activity pushes its deadline later without touching the
// wheel; the pass that finds the early bucket re-arms it.
func Example() {
	w, err := timerwheel.New(origin, timerwheel.DefaultTick, timerwheel.DefaultBuckets)
	if err != nil {
		panic(err)
	}
	a := &conn{name: "a", idle: 3 * time.Second}
	b := &conn{name: "b", idle: 3 * time.Second}
	for _, c := range []*conn{a, b} {
		c.deadline = origin.Add(c.idle)
		w.Schedule(c, c.deadline) // the one re-arm path
	}
	// Activity on b at +2s: only the real deadline moves.
	b.deadline = origin.Add(2*time.Second + b.idle)

	for sec := 1; sec <= 6; sec++ {
		p, err := w.Expire(origin.Add(time.Duration(sec)*time.Second), 4096)
		if err != nil {
			panic(err)
		}
		if p.Visited > 0 {
			fmt.Printf("pass +%ds: visited %d, fired %d, re-armed %d\n", sec, p.Visited, p.Fired, p.Rearmed)
		}
	}
	// Output:
	// a timed out at +4s
	// pass +4s: visited 2, fired 1, re-armed 1
	// b timed out at +6s
	// pass +6s: visited 1, fired 1, re-armed 0
}

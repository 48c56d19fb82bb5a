package tw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW6_BareWheelAgainstItsModel checks TW-6 the way the claims table
// says it is checked, against a model: the bare wheel (no cop) is driven
// through its whole public surface by seeded operations, and after each
// one it must agree with a model written from the claims' words. Schedule
// cancels first and puts an element in the bucket of the first tick after
// its deadline, never behind the cursor; a zero deadline only cancels
// (TW-6). A pass examines the buckets of the ticks that have begun since
// the last one, at most a ring of them (TW-3, TW-5's fast-forward); it
// fires what is strictly past its real deadline (TW-2), drops what has
// none and re-arms the rest, and what a callback schedules waits for a
// later pass (TW-5: once per ring). The audit lists what is lost and late
// (TW-7). Passes come at any instant: within a tick, twice in one, on a
// tick's start, a clock stepped back, before the wheel's origin, and jumps
// past the ring; budgets always suffice (TW-4's checks cover exhaustion).
func TestTW6_BareWheelAgainstItsModel(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-6", Options: simtest.Options{Seeds: seeds(40)},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			run, err := newWheelRun(s.Rand())
			if err != nil {
				return smp, err
			}
			steps := 200 + s.Rand().IntN(400)
			for i := range steps {
				if err := run.step(); err != nil {
					smp.Wrongly(func() string { return err.Error() })
					return smp, fmt.Errorf("TW-6: step %d of a wheel of %d buckets: %w", i, run.ring, err)
				}
			}
			smp.Of = int64(run.ops)
			smp.Observe(float64(run.passes), func() string {
				return fmt.Sprintf("%d operations on a wheel of %d buckets, %d passes (%d fired, %d before the origin, %d past the ring)",
					run.ops, run.ring, run.passes, run.fired, run.early, run.jumps)
			})
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d operations on bare wheels, up to %.0f passes in one run, %d disagreed with the model%s", o.Of, o.Worst, o.Wrong, failedText(o))
		},
	})
}

// TestTW6_NewRefusesWhatItCannotHold holds the wheel's constructor to its
// documented preconditions: a positive tick and a power of two of buckets
// up to MaxBuckets, refused with an error, never a panic.
func TestTW6_NewRefusesWhatItCannotHold(t *testing.T) {
	origin := time.Unix(0, 0)
	tick := claims.Get("TW-2", "tick").Duration()
	for _, c := range []struct {
		tick    time.Duration
		buckets int
		ok      bool
	}{
		{tick, 1, true}, {tick, 8, true}, {time.Nanosecond, 2, true},
		{0, 8, false}, {-tick, 8, false},
		{tick, 0, false}, {tick, -8, false}, {tick, 3, false}, {tick, 6, false}, {tick, math.MinInt, false},
		{tick, 2 * timerwheel.MaxBuckets, false}, {tick, timerwheel.MaxBuckets + 1, false},
	} {
		w, err := timerwheel.New(origin, c.tick, c.buckets)
		if c.ok != (err == nil) || c.ok != (w != nil) {
			t.Errorf("TW-6: New(tick %v, %d buckets) = %v, %v; want accepted %v", c.tick, c.buckets, w != nil, err, c.ok)
		}
	}
	// The largest ring is accepted: its bound is inclusive.
	w, err := timerwheel.New(origin, tick, timerwheel.MaxBuckets)
	if err != nil || w.Buckets() != timerwheel.MaxBuckets {
		t.Errorf("TW-6: New with MaxBuckets (%d) buckets: %v", timerwheel.MaxBuckets, err)
	}
}

// wtimer is a test element: a real deadline the test sets, and what its
// Expired callback does, drawn before the pass so the model knows it.
type wtimer struct {
	timerwheel.Element
	id   int
	real time.Time
	run  *wheelRun
	// onFire, if not zero, is the deadline the callback schedules the
	// element at again (as the cop re-arms a connection's other timeout).
	onFire time.Time
}

func (t *wtimer) Deadline() time.Time { return t.real }

func (t *wtimer) Expired(now time.Time) { t.run.expired(t, now) }

// mElem is the model's view of one element.
type mElem struct {
	sched bool
	at    time.Time // the wheel deadline
	k     int64     // the tick whose bucket holds it
}

type wheelRun struct {
	rnd    *rand.Rand
	w      *timerwheel.Wheel
	origin time.Time
	tick   time.Duration
	ring   int64
	now    time.Time
	ts     []*wtimer
	m      []mElem
	cursor int64
	totals timerwheel.Totals

	// During a pass: what the callbacks saw.
	firedNow  []int
	reentered error

	ops, passes, fired, early, jumps int
}

func newWheelRun(rnd *rand.Rand) (*wheelRun, error) {
	tick := claims.Get("TW-2", "tick").Duration()
	origin := time.Unix(1_000_000, 0)
	ring := int64(1) << rnd.IntN(7)
	w, err := timerwheel.New(origin, tick, int(ring))
	if err != nil {
		return nil, err
	}
	r := &wheelRun{rnd: rnd, w: w, origin: origin, tick: tick, ring: ring}
	// Start anywhere from a few ticks before the origin to a little after.
	r.now = origin.Add(time.Duration(rnd.Int64N(int64(6*tick))) - 3*tick)
	for i := range 8 + rnd.IntN(40) {
		r.ts = append(r.ts, &wtimer{id: i, run: r})
	}
	r.m = make([]mElem, len(r.ts))
	return r, nil
}

// tickOf is floor((t-origin)/tick), in the model's own words.
func (r *wheelRun) tickOf(t time.Time) int64 {
	return int64(math.Floor(float64(t.Sub(r.origin)) / float64(r.tick)))
}

// someInstant is an instant around now: a few ticks behind to three rings
// ahead, on a tick's start one time in four.
func (r *wheelRun) someInstant() time.Time {
	span := time.Duration(3*r.ring+3) * r.tick
	t := r.now.Add(time.Duration(r.rnd.Int64N(int64(span))) - 3*r.tick)
	if r.rnd.IntN(4) == 0 {
		t = r.w.TickStart(r.tickOf(t))
	}
	return t
}

func (r *wheelRun) schedule(t *wtimer, at time.Time) {
	r.w.Schedule(t, at)
	e := &r.m[t.id]
	e.sched = !at.IsZero()
	if e.sched {
		e.at, e.k = at, max(r.tickOf(at)+1, r.cursor)
	}
}

func (r *wheelRun) step() error {
	r.ops++
	t := r.ts[r.rnd.IntN(len(r.ts))]
	switch op := r.rnd.IntN(20); {
	case op < 6: // schedule at the real deadline or earlier (TW-1)
		t.real = r.someInstant()
		r.schedule(t, t.real.Add(-time.Duration(r.rnd.Int64N(int64(r.tick)))*time.Duration(r.rnd.IntN(2))))
	case op < 7: // a zero deadline cancels
		r.schedule(t, time.Time{})
	case op < 8:
		r.w.Cancel(t)
		r.m[t.id].sched = false
	case op < 9: // activity: the real deadline moves later, the wheel is not told
		if !t.real.IsZero() {
			t.real = t.real.Add(time.Duration(r.rnd.Int64N(int64(2 * r.tick))))
		}
	case op < 10: // disarmed without a cancel: a visit drops it
		t.real = time.Time{}
	case op < 11: // shortened without a re-arm (late) or armed unscheduled (lost): the audit's cases
		t.real = r.someInstant()
	case op < 12: // what the next firing of it schedules
		t.onFire = time.Time{}
		if r.rnd.IntN(2) == 0 {
			t.onFire = r.someInstant().Add(time.Duration(r.ring) * r.tick)
		}
	case op < 14:
		return r.audit()
	default:
		return r.pass()
	}
	return r.agree()
}

// advance moves the clock: within the tick, to a tick's start, a few ticks,
// past the ring, or back.
func (r *wheelRun) advance() {
	switch r.rnd.IntN(8) {
	case 0:
		r.now = r.now.Add(time.Duration(r.rnd.Int64N(int64(r.tick) / 2)))
	case 1:
		r.now = r.w.TickStart(r.tickOf(r.now) + 1)
	case 2, 3, 4:
		r.now = r.now.Add(time.Duration(r.rnd.Int64N(int64(3 * r.tick))))
	case 5:
		r.now = r.now.Add(time.Duration(r.ring+int64(r.rnd.IntN(int(2*r.ring)))) * r.tick)
		r.jumps++
	case 6:
		r.now = r.now.Add(-time.Duration(r.rnd.Int64N(int64(2 * r.tick)))) // a clock stepped back
	case 7: // stays: a second pass at the same instant
	}
}

func (r *wheelRun) pass() error {
	r.advance()
	r.passes++
	if r.now.Before(r.origin) {
		r.early++
	}
	// The model's pass, from the claims' words.
	last := r.tickOf(r.now)
	var want []int
	var buckets, visited, fired, rearmed, dropped int64
	if last >= r.cursor {
		if last-r.cursor >= r.ring {
			r.cursor = last - r.ring + 1 // TW-5: fast-forward
		}
		buckets = last - r.cursor + 1
		floorAfter := last + 1
		var refire []int
		for i := range r.m {
			e := &r.m[i]
			if !e.sched || ((e.k-r.cursor)%r.ring+r.ring)%r.ring > last-r.cursor {
				continue
			}
			visited++
			real := r.ts[i].real
			switch {
			case real.IsZero():
				dropped++
				e.sched = false
			case real.Before(r.now): // TW-2: strictly past
				fired++
				e.sched = false
				want = append(want, i)
				if !r.ts[i].onFire.IsZero() {
					refire = append(refire, i)
				}
			default: // re-armed at the real deadline, for a later pass
				rearmed++
				e.at, e.k = real, max(r.tickOf(real)+1, floorAfter)
			}
		}
		r.cursor = floorAfter
		for _, i := range refire { // scheduled by the callback: inserted after the pass
			r.m[i] = mElem{sched: true, at: r.ts[i].onFire, k: max(r.tickOf(r.ts[i].onFire)+1, r.cursor)}
		}
	}
	r.totals.Passes++
	r.totals.Buckets += buckets
	r.totals.Visited += visited
	r.totals.Fired += fired
	r.totals.Rearmed += rearmed
	r.totals.Dropped += dropped

	r.firedNow, r.reentered = r.firedNow[:0], nil
	p, err := r.w.Expire(r.now, len(r.ts)+1)
	if err != nil {
		return fmt.Errorf("a pass at tick %d returned %v", last, err)
	}
	r.fired += len(r.firedNow)
	slices.Sort(r.firedNow)
	switch {
	case r.reentered != nil:
		return r.reentered
	case !slices.Equal(r.firedNow, want):
		return fmt.Errorf("a pass at %v (tick %d) fired elements %v, the model %v", r.now.Sub(r.origin), last, r.firedNow, want)
	case p.Exhausted || p.Buckets != int(buckets) || p.Visited != int(visited) || p.Fired != int(fired) || p.Rearmed != int(rearmed) || p.Dropped != int(dropped):
		return fmt.Errorf("a pass at %v (tick %d) returned %+v; the model examined %d buckets, visited %d, fired %d, re-armed %d, dropped %d",
			r.now.Sub(r.origin), last, p, buckets, visited, fired, rearmed, dropped)
	}
	if _, err := r.w.Expire(r.now, 0); err == nil {
		return errors.New("a pass with a budget of 0 was accepted")
	}
	return r.agree()
}

func (r *wheelRun) expired(t *wtimer, now time.Time) {
	r.firedNow = append(r.firedNow, t.id)
	if _, err := r.w.Expire(now, 1); !errors.Is(err, timerwheel.ErrReentrant) && r.reentered == nil {
		r.reentered = fmt.Errorf("Expire called from a callback returned %v, want ErrReentrant", err)
	}
	if !t.onFire.IsZero() {
		t.real = t.onFire
		r.w.Schedule(t, t.onFire)
	}
}

// agree compares the wheel's observable state with the model's.
func (r *wheelRun) agree() error {
	if got := r.w.Cursor(); got != r.cursor {
		return fmt.Errorf("the wheel's cursor is at tick %d, the model's at %d", got, r.cursor)
	}
	if got := r.w.Totals(); got != r.totals {
		return fmt.Errorf("the wheel's totals are %+v, the model's %+v", got, r.totals)
	}
	n := 0
	for i, t := range r.ts {
		e := r.m[i]
		at, ok := t.WheelDeadline()
		switch {
		case ok != e.sched || t.Scheduled() != e.sched:
			return fmt.Errorf("element %d scheduled %v, the model says %v", i, ok, e.sched)
		case ok && !at.Equal(e.at):
			return fmt.Errorf("element %d held at %v, the model at %v", i, at.Sub(r.origin), e.at.Sub(r.origin))
		}
		if e.sched {
			n++
		}
	}
	if r.w.Len() != n {
		return fmt.Errorf("the wheel holds %d elements, the model %d", r.w.Len(), n)
	}
	for _, k := range []int64{r.cursor - 1, r.cursor, r.cursor + r.ring} {
		if got := r.w.TickOf(r.w.TickStart(k)); got != k {
			return fmt.Errorf("TickOf(TickStart(%d)) = %d", k, got)
		}
		if got := r.w.TickOf(r.w.TickStart(k).Add(-1)); got != k-1 {
			return fmt.Errorf("TickOf(a nanosecond before tick %d) = %d", k, got)
		}
	}
	return nil
}

// audit runs the wheel's audit over every element in id order (TW-7): lost
// is a real deadline the wheel does not hold, late one it holds too late.
func (r *wheelRun) audit() error {
	var wantLost, wantLate []int
	for i, t := range r.ts {
		e := r.m[i]
		switch {
		case t.real.IsZero():
		case !e.sched:
			wantLost = append(wantLost, i)
		case e.at.After(t.real):
			wantLate = append(wantLate, i)
		}
	}
	rep := r.w.Audit(func(yield func(timerwheel.Timer) bool) {
		for _, t := range r.ts {
			if !yield(t) {
				return
			}
		}
	})
	ids := func(ts []timerwheel.Timer) []int {
		var out []int
		for _, t := range ts {
			out = append(out, t.(*wtimer).id)
		}
		return out
	}
	switch {
	case rep.Checked != len(r.ts):
		return fmt.Errorf("the audit checked %d of %d elements", rep.Checked, len(r.ts))
	case !slices.Equal(ids(rep.Lost), wantLost) || !slices.Equal(ids(rep.Late), wantLate):
		return fmt.Errorf("the audit found lost %v and late %v; the model %v and %v", ids(rep.Lost), ids(rep.Late), wantLost, wantLate)
	case rep.Clean() != (len(wantLost) == 0 && len(wantLate) == 0):
		return fmt.Errorf("the audit's Clean is %v with lost %v and late %v", rep.Clean(), wantLost, wantLate)
	}
	return r.agree()
}

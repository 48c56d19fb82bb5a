package netthreads

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// Fault injection for the audit's scenario (TW-7). The cop's API cannot
// break the TW-1 contract, by design: every setter re-arms. The audit exists
// for the day a bug does (the seed's TS-4131), so its check needs such a bug
// on demand, without a hook in production code and without a mutant (the
// "audit disabled" mutant must be caught on otherwise correct code). These
// functions reach a connection's wheel element through reflection and call
// the wheel's own public Cancel and Schedule on it: exactly the corruption a
// bookkeeping bug produces. Call them with the handler's lock held (inside
// Handler.Do), never during a pass.

// connTimer returns the wheel element the cop schedules for c, as the
// timerwheel.Timer it is.
func connTimer(c *inactivitycop.Conn) (timerwheel.Timer, error) {
	if c == nil {
		return nil, fmt.Errorf("netthreads: nil connection")
	}
	f := reflect.ValueOf(c).Elem().FieldByName("timer")
	if !f.IsValid() {
		return nil, fmt.Errorf("netthreads: inactivitycop.Conn has no timer field any more: update the fault injector")
	}
	t, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Interface().(timerwheel.Timer)
	if !ok {
		return nil, fmt.Errorf("netthreads: inactivitycop.Conn's timer field (%v) is not a timerwheel.Timer any more: update the fault injector", f.Type())
	}
	return t, nil
}

// Lose takes c out of cop's wheel and leaves its deadlines armed: no pass
// will ever visit it (the audit's "lost").
func Lose(cop *inactivitycop.Cop, c *inactivitycop.Conn) error {
	t, err := connTimer(c)
	if err != nil {
		return err
	}
	cop.Wheel().Cancel(t)
	return nil
}

// Delay re-schedules c in cop's wheel by later than its real deadline, as a
// setter that shortened the deadline without re-arming would leave it (the
// audit's "late"). c must have a live deadline and by must be positive.
func Delay(cop *inactivitycop.Cop, c *inactivitycop.Conn, by time.Duration) error {
	t, err := connTimer(c)
	if err != nil {
		return err
	}
	real := c.Deadline()
	if real.IsZero() || by <= 0 {
		return fmt.Errorf("netthreads: Delay needs a live deadline and a positive delay, got %v and %v", real, by)
	}
	cop.Wheel().Schedule(t, real.Add(by))
	return nil
}

package timerwheel

import "time"

// Timer is what the wheel needs from the struct that embeds an Element.
// Only types that embed Element implement it (element is promoted from it).
type Timer interface {
	// Deadline returns the real deadline, which the wheel re-reads whenever
	// it visits the element. The zero Time means no deadline: the wheel then
	// drops the element without firing it.
	Deadline() time.Time
	// Expired is called by Expire once the real deadline has passed (now is
	// strictly after it). The element is no longer scheduled when it runs;
	// Expired may call Schedule or Cancel on any element of the wheel (an
	// element scheduled during a pass is inserted when the pass ends), but
	// not Expire.
	Expired(now time.Time)

	element() *Element
}

// Element is the wheel's per-timer state. Embed it (by value) in the struct
// that implements Deadline and Expired; its zero value is an unscheduled
// element. An Element must not be copied while it is scheduled.
type Element struct {
	prev, next *Element
	owner      Timer
	w          *Wheel    // nil while unscheduled
	at         time.Time // the wheel deadline: never later than the real one (TW-1)
	// slot names the list that holds the element, and is kept up to date
	// only on the head of a list (the only element whose unlink touches
	// the list's head pointer): a bucket index, deferredSlot or currentSlot.
	// That keeps detaching a whole bucket O(1).
	slot int32
}

const (
	// deferredSlot marks the list of elements re-armed or scheduled during
	// a pass, inserted when the pass ends.
	deferredSlot = -1
	// currentSlot marks the bucket being swept, detached from the ring so
	// that elements re-armed into the same slot for a later ring never
	// rejoin it (TW-4: a continuation resumes it without revisiting them).
	currentSlot = -2
)

//lint:ignore U1000 satisfies Timer for the types that embed Element, in other packages
func (e *Element) element() *Element { return e }

// Scheduled reports whether the element is in a wheel.
func (e *Element) Scheduled() bool { return e.w != nil }

// WheelDeadline returns the deadline the wheel holds for the element and
// whether it is scheduled. It is at most the real deadline (TW-1).
func (e *Element) WheelDeadline() (time.Time, bool) {
	if e.w == nil {
		return time.Time{}, false
	}
	return e.at, true
}

// unlink removes e from whichever list of its wheel holds it, in O(1), and
// marks it unscheduled.
func (e *Element) unlink() {
	w := e.w
	if w == nil {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		*w.head(e.slot) = e.next
		if e.next != nil {
			e.next.slot = e.slot // the new head carries the list's name
		}
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.w = nil, nil, nil
	w.n--
}

// push links e at the head of the list starting at *head.
func (e *Element) push(head **Element, slot int32) {
	e.slot = slot
	e.prev = nil
	e.next = *head
	if *head != nil {
		(*head).prev = e
	}
	*head = e
}

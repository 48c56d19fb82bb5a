// Package timerwheel is an intrusive, single-level timer wheel for connection
// timeouts. It is the data structure behind the inactivity cop of package
// inactivitycop (claims TW-1..TW-7 of the project's CLAIMS.md).
//
// # Model
//
// Time is cut into ticks of a fixed length (default 1 s) counted from an
// origin. The ring has a power-of-two number of buckets (default 4,096); tick
// k lives in bucket k mod len(ring). An element whose wheel deadline is at
// lies in the bucket of tick floor((at-origin)/tick)+1, the first tick that
// starts strictly after at. So every element of a bucket whose tick has begun
// has a wheel deadline in the past. Deadlines further out than the ring wrap
// into the bucket of their tick and are looked at once per ring until due
// (TW-5). Deadlines already behind the cursor are clamped to the cursor, so
// the next pass sees them.
//
// The element is embedded in the caller's struct (intrusive: no allocation
// per timer, O(1) Schedule and Cancel, TW-6). The caller's struct supplies
// the two methods of Timer: Deadline, the real deadline, and Expired, called
// when the wheel finds it passed.
//
// # The contract that makes activity cheap (TW-1)
//
// The wheel may hold a deadline earlier than the real one, never later. So
// the hot path that pushes a deadline later (network activity) only writes
// the caller's field and leaves the wheel alone. When the early bucket comes
// due, Expire re-reads Deadline: an element not yet due is re-armed at its
// real deadline, a passed one is fired. Anything that makes a deadline
// earlier must call Schedule again. Audit (and Check) find the elements that
// break the contract: a live deadline the wheel does not hold (lost) or holds
// too late (late).
//
// # Passes
//
// Expire(now, budget) visits the buckets whose tick has begun, in order, and
// stops after budget elements. It leaves the cursor on the unfinished bucket
// so the next call continues exactly there (TW-4). A deadline has passed once
// now is strictly after it (TW-2). If the clock jumped more than the whole
// ring since the last pass, the cursor is fast-forwarded so that each bucket
// is examined once (TW-5). Elements re-armed or scheduled during a pass are
// inserted when the pass ends, so a pass visits each element at most once.
//
// The wheel never reads a clock and starts no tasks. It is not safe for
// concurrent use (the caller's lock guards it), which keeps it deterministic
// under the project's simulator.
package timerwheel

package flight

import "github.com/windtunnel/windtunnel/impl/authz"

// Ops a relay answers.
const (
	OpGranted    = "granted"    // accesschannels: may Reader see Channel (OC)
	OpMember     = "member"     // membership: is User an active member of Channel (MS)
	OpChanged    = "changed"    // the write path after a commit: invalidate locally, publish
	OpInvalidate = "invalidate" // the receiving path: apply a message as if it came over the bus
	OpClock      = "clock"      // the relay's wall clock, for the clock-uncertainty probe
	OpStats      = "stats"      // pool waits, statement times, subscription counters
)

// Request is one line a relay reads.
type Request struct {
	ID        uint64         `json:"id"`
	Op        string         `json:"op"`
	Community authz.ID       `json:"community,omitzero"`
	User      authz.ID       `json:"user,omitzero"`
	Channel   authz.ID       `json:"channel,omitzero"`
	Msg       *authz.Message `json:"msg,omitempty"`
}

// Response is one line a relay writes. Invoke and Return are wall-clock
// UnixNano instants taken right before the call into the relay's wiring
// and right after it returned; Clock is the relay's wall clock for OpClock.
type Response struct {
	ID     uint64 `json:"id"`
	OK     bool   `json:"ok"`
	Err    string `json:"err,omitempty"`
	Invoke int64  `json:"invoke"`
	Return int64  `json:"return"`
	Clock  int64  `json:"clock,omitempty"`
	Stats  *Stats `json:"stats,omitempty"`
}

// Stats is what OpStats reports: the relay's pool waits and statement
// durations (ns, each at most MaxSamples, the latest kept) and its
// subscriber's counters.
type Stats struct {
	AcquireWaits  []int64 `json:"acquire_waits"` // checkouts only
	Statements    []int64 `json:"statements"`
	MemberReads   []int64 `json:"member_reads"`  // member half: Acquire start to statement return
	Subscriptions int64   `json:"subscriptions"` // confirmed by Redis: 1 + reconnects
	Subscribed    int64   `json:"subscribed"`    // 1 while subscribed
	Received      int64   `json:"received"`      // invalidations received
	ReceiveErrors int64   `json:"receive_errors"`
	StatementErrs int64   `json:"statement_errors"`
	AcquireErrs   []int64 `json:"acquire_errors"` // Acquire calls that failed, call to error (not in AcquireWaits)
	Connects      int64   `json:"connects"`       // connections the relay's pool opened
	ConnectMicros int64   `json:"connect_micros"` // the time those openings took, in all
	Pings         int64   `json:"pings"`          // idle connections pinged before a checkout
}

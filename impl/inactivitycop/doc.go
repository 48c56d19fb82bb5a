// Package inactivitycop times out idle and over-long connections the way
// Apache Traffic Server's inactivity cop does after PR #13821. Instead of
// walking every connection once a second, each net thread keeps its
// connections in a timer wheel (package timerwheel). A pass looks only at the
// connections whose deadline has come due. Claims TW-1..TW-10 of the
// project's CLAIMS.md.
//
// # Pieces
//
//   - Cop is the pure core of one net thread: open connections, their
//     inactivity and active timeouts, the wheel, and Pass(now). It never
//     reads a clock, so tests drive it instant by instant.
//   - Handler wraps a Cop for a real service (or the simulator): a lock, the
//     Runtime's clock, and the cop task (Run or Start). The task runs one
//     pass per tick (default 1 s) on the grid origin+k*tick. It continues
//     1 ms later when a pass hits its budget (default 4,096 connections,
//     TW-4).
//   - Config (start from DefaultConfig) and Metrics. Metrics are registered
//     under the seed's names: inactivity_cop_passes, _visited, _fired,
//     _pass_time_us, _pass_max_us, _budget_exhausted, plus _lookups and
//     _audit_lost/_late.
//
// # Timeouts
//
// A connection has an inactivity timeout (deadline = last activity + timeout)
// and an active timeout (an absolute deadline). Every setter goes through one
// re-arm path that schedules the earlier deadline in the wheel. NetActivity,
// the hot path, only moves the inactivity deadline later and leaves the wheel
// alone. So the wheel may hold a deadline earlier than the real one, never
// later (TW-1). The pass that finds an early entry re-reads the real deadline
// and re-arms it.
//
// A deadline has passed once the pass instant is strictly after it (TW-2). A
// pass fires every passed timeout of a connection it visits, the inactivity
// one first, and firing disarms it. An inactivity timeout must be set again;
// activity does not revive it. The callback given to NewHandler learns of
// each timeout after the pass releases the lock; closing the connection is
// its decision. The semantics are those of the full-scan cop in the project's
// model package, which fires the same connections at the same pass instants.
//
// # The connection queue and eviction
//
// Each Cop keeps its open connections in a bounded queue ordered by activity.
// A connection joins the newest end when it opens and moves there on every
// NetActivity; setting or disarming a timeout is not activity. Opening a
// connection when Config.MaxConns (default DefaultMaxConns) are open first
// evicts the least recently active one, from the oldest end. The evicted
// connection is closed, so it leaves the queue and the wheel and never times
// out again. It is reported exactly once as a Timeout of Kind Evicted:
// Cop.Open returns it, Handler.Open hands it to the callback. Evictions are
// counted in Metrics.Evicted. This is the seed's fix "Report a timeout when
// evicting a connection from a full queue" (TW-10).
//
// # Audit
//
// Config.Audit turns on the seed's opt-in audit. Each pass then checks every
// open connection for a live deadline the wheel will never visit (lost) or
// holds too late (late), and counts them (TW-7). It costs a full scan, so it
// is a debugging aid.
//
// # Concurrency and determinism
//
// Handler methods take the handler's rt.Mutex; a pass holds it while it
// runs. Nothing here starts a goroutine, reads the wall clock or iterates a
// map, so under the project's simulator (which implements rt.Runtime) a
// handler is deterministic per seed.
package inactivitycop

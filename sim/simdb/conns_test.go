package simdb_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// paid is one Acquire as a test sees it: how long it took and whether
// it failed.
type paid struct {
	wait time.Duration
	err  error
}

// connLife flies checkouts of a one-connection pool with the Connections
// model, at the given instants, with a Hook that times a connect at 7 ms
// and a ping at 3 ms and fails the round trips named in fail (by name, in
// order of asking), and returns each checkout and the database's counters.
func connLife(t *testing.T, conns simdb.Connections, when []time.Duration, fail ...string) ([]paid, simdb.Stats) {
	t.Helper()
	var out []paid
	var st simdb.Stats
	boom := errors.New("boom")
	run(t, 1, func(s *sim.Sim) {
		hook := func(q simdb.Statement) simdb.Fault {
			f := simdb.Fault{Fixed: true, Required: true}
			switch q.Name {
			case simdb.ConnectStatement:
				f.Latency = ms(7)
			case simdb.PingStatement:
				f.Latency = ms(3)
			default:
				s.Failf("the hook saw %q, not a connection's round trip", q.Name)
			}
			if len(fail) > 0 && fail[0] == q.Name {
				fail, f.Err = fail[1:], boom
			}
			return f
		}
		db := newDB(s, simdb.Config{PoolSize: 1, Connections: conns, Hook: hook})
		for _, t0 := range when {
			_ = s.Sleep(bg, t0-s.Elapsed())
			start := s.Elapsed()
			c, err := db.Acquire(bg)
			out = append(out, paid{s.Elapsed() - start, err})
			if err == nil {
				if got := at(c.CheckedOutAt()); got != s.Elapsed() {
					s.Failf("checked out at %v, handed over at %v", got, s.Elapsed())
				}
				c.Release()
			}
		}
		st = db.Stats()
	})
	return out, st
}

func TestLazyConnectionIsOpenedByItsFirstCheckout(t *testing.T) {
	got, st := connLife(t, simdb.Connections{Lazy: true}, []time.Duration{0, time.Second, time.Hour})
	assert.Equal(t, []paid{{ms(7), nil}, {0, nil}, {0, nil}}, got, "one opening, then never a ping")
	assert.Equal(t, int64(1), st.Connects)
	assert.Equal(t, ms(7), st.ConnectTime, "the one opening's round trip")
	assert.Zero(t, st.Pings)
}

func TestIdleConnectionIsPingedPastIdlePing(t *testing.T) {
	c := simdb.Connections{IdlePing: time.Second}
	// Released at 0, 1 s and 3 s+3 ms: idle exactly 1 s (no ping), then
	// 2 s (a ping), then 1 ms.
	got, st := connLife(t, c, []time.Duration{0, time.Second, 3 * time.Second, 3*time.Second + ms(4)})
	assert.Equal(t, []paid{{0, nil}, {0, nil}, {ms(3), nil}, {0, nil}}, got)
	assert.Equal(t, int64(1), st.Pings)
	assert.Zero(t, st.Connects, "open from the start")
}

func TestFailedPingReopensTheConnection(t *testing.T) {
	got, st := connLife(t, simdb.Connections{IdlePing: time.Second}, []time.Duration{2 * time.Second}, simdb.PingStatement)
	assert.Equal(t, []paid{{ms(3) + ms(7), nil}}, got, "a ping, then an opening")
	assert.Equal(t, int64(1), st.Pings)
	assert.Equal(t, int64(1), st.Connects)
}

func TestFailedOpeningFailsTheCheckoutOnly(t *testing.T) {
	got, st := connLife(t, simdb.Connections{Lazy: true}, []time.Duration{0, time.Second}, simdb.ConnectStatement)
	require.Len(t, got, 2)
	assert.ErrorContains(t, got[0].err, "connect: boom")
	assert.Equal(t, ms(7), got[0].wait)
	assert.Equal(t, paid{ms(7), nil}, got[1], "the next checkout opens it again")
	assert.Equal(t, int64(2), st.Connects)
	assert.Equal(t, int64(1), st.ConnectErrors)
	assert.Equal(t, ms(7), st.ConnectTime, "the opening that opened, not the one that failed")
	assert.Zero(t, st.InUse)
}

// TestQueuedCheckoutPaysAfterItsGrant: a waiter granted the connection
// another caller releases waits for that release only: the connection was
// never idle, so it is not pinged however long the wait.
func TestQueuedCheckoutPaysAfterItsGrant(t *testing.T) {
	var waits []time.Duration
	run(t, 1, func(s *sim.Sim) {
		hook := func(q simdb.Statement) simdb.Fault { return simdb.Fault{Fixed: true, Required: true, Latency: ms(7)} }
		db := newDB(s, simdb.Config{PoolSize: 1, Connections: simdb.Connections{Lazy: true, IdlePing: time.Second}, Hook: hook})
		first, err := db.Acquire(bg)
		if err != nil {
			s.Failf("first: %v", err)
		}
		done := s.NewEvent("second")
		s.Go("second", func() {
			start := s.Elapsed()
			c, err := db.Acquire(bg)
			if err != nil {
				s.Failf("second: %v", err)
			}
			waits = append(waits, s.Elapsed()-start)
			c.Release()
			done.Set()
		})
		_ = s.Sleep(bg, 2*time.Second)
		first.Release()
		_ = done.Wait(bg)
	})
	assert.Equal(t, []time.Duration{2 * time.Second}, waits, "queued behind the first's hold; no round trip of its own")
}

func TestConnectionsRefuseWhatTheyCannotModel(t *testing.T) {
	for _, tc := range []struct {
		c    simdb.Connections
		want string // "" for a valid one
	}{
		{simdb.Connections{IdlePing: -time.Second}, "IdlePing must not be negative"},
		{simdb.Connections{OpenMin: -time.Millisecond}, "0 <= OpenMin <= OpenMax"},
		{simdb.Connections{OpenMin: ms(2), OpenMax: ms(1)}, "0 <= OpenMin <= OpenMax"},
		{simdb.Connections{OpenMax: 2 * time.Hour}, "above the 1h0m0s limit"},
		{simdb.Connections{OpenMin: ms(1), OpenMax: ms(1), Lazy: true}, ""},
	} {
		c, want := tc.c, tc.want
		err := simdb.Config{Connections: c}.Validate()
		if want == "" {
			assert.NoError(t, err, "%+v", c)
		} else {
			assert.ErrorContains(t, err, want, "%+v", c)
		}
	}
}

// TestOpeningStartsABackendFirst: an opening takes its drawn backend start,
// then its round trip; a checkout of an open connection takes neither.
func TestOpeningStartsABackendFirst(t *testing.T) {
	got, st := connLife(t, simdb.Connections{Lazy: true, OpenMin: ms(10), OpenMax: ms(10)}, []time.Duration{0, time.Second})
	assert.Equal(t, []paid{{ms(17), nil}, {0, nil}}, got)
	assert.Equal(t, ms(17), st.ConnectTime)
}

func TestConnectionsAreNamedInTheRunHeader(t *testing.T) {
	c := simdb.Config{Connections: simdb.Connections{Lazy: true, IdlePing: time.Second}}
	assert.Contains(t, c.String(), " conns=lazy idle_ping=1s")
	c.Connections.OpenMin, c.Connections.OpenMax = ms(12), ms(25)
	assert.Contains(t, c.String(), " open=12ms–25ms")
	assert.NotContains(t, simdb.Config{}.String(), "conns=")
}

// TestBrokenConnectionIsOpenedAgain: a statement whose error breaks its
// connection (a reset) closes it at Release, and the next checkout of it
// opens it again; an error that does not break it leaves it open.
func TestBrokenConnectionIsOpenedAgain(t *testing.T) {
	for _, breaks := range []bool{true, false} {
		var wait time.Duration
		var st simdb.Stats
		run(t, 1, func(s *sim.Sim) {
			reads := 0
			hook := func(q simdb.Statement) simdb.Fault {
				switch q.Name {
				case simdb.ConnectStatement:
					return simdb.Fault{Fixed: true, Required: true, Latency: ms(7)}
				case "read":
					reads++
					if reads == 1 {
						return simdb.Fault{Err: errors.New("reset"), Breaks: breaks, Required: true}
					}
				}
				return simdb.Fault{}
			}
			db := newDB(s, simdb.Config{PoolSize: 1, Statements: []string{"read"}, Hook: hook})
			c, err := db.Acquire(bg)
			if err != nil {
				s.Failf("acquire: %v", err)
			}
			if _, err := read(bg, s, c); err == nil {
				s.Failf("the first read must fail")
			}
			c.Release()
			start := s.Elapsed()
			c, err = db.Acquire(bg)
			if err != nil {
				s.Failf("acquire again: %v", err)
			}
			wait = s.Elapsed() - start
			c.Release()
			st = db.Stats()
		})
		if breaks {
			assert.Equal(t, ms(7), wait, "the broken connection is opened again")
			assert.Equal(t, int64(1), st.Connects)
		} else {
			assert.Zero(t, wait, "an error that breaks nothing leaves the connection open")
			assert.Zero(t, st.Connects)
		}
	}
}

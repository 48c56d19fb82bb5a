package simdb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

type readRec struct {
	start, snap, end time.Time
	value            int
}

type writeRec struct {
	call, commit, end, inside time.Time
}

// TestStatementSeesSnapshotAtStart: a reader keeps querying while a writer
// keeps committing, with latencies that straddle each other. Every read
// returns exactly the number of commits before its start instant, so a
// write that committed during a read's latency is never seen, and every
// commit instant lies inside its own write's latency window.
func TestStatementSeesSnapshotAtStart(t *testing.T) {
	straddled := 0
	for seed := uint64(1); seed <= 50; seed++ {
		var reads []readRec
		var writes []writeRec
		var commits []simdb.Commit
		run(t, seed, func(s *sim.Sim) {
			db := newDB(s, simdb.Config{
				PoolSize:   4,
				Latency:    simdb.Latency{BaseMin: ms(1), BaseMax: ms(30), SlowProb: 0.2, SlowMin: ms(200), SlowMax: time.Second},
				Statements: []string{"read"},
			})
			s.Go("writer", func() {
				for range 20 {
					_ = s.Sleep(bg, time.Duration(s.Rand().IntN(100))*time.Millisecond)
					w := writeRec{call: s.Now()}
					var err error
					w.commit, err = db.Write(bg, "inc", func(st *counter) { w.inside = db.CommitInstant(); inc(st) })
					if err != nil {
						s.Failf("write: %v", err)
					}
					w.end = s.Now()
					writes = append(writes, w)
				}
			})
			for range 40 {
				c, err := db.Acquire(bg)
				if err != nil {
					s.Failf("acquire: %v", err)
				}
				r := readRec{start: s.Now()}
				r.value, err = simdb.Query(bg, c, "read", nil, func(st *counter) int { r.snap = s.Now(); return st.n })
				if err != nil {
					s.Failf("read: %v", err)
				}
				r.end = s.Now()
				c.Release()
				reads = append(reads, r)
				_ = s.Sleep(bg, time.Duration(s.Rand().IntN(50))*time.Millisecond)
			}
			commits = db.Commits()
		})
		require.NotEmpty(t, commits)
		for i, c := range commits {
			require.Equal(t, uint64(i+1), c.Seq)
			require.Equal(t, "inc", c.What)
		}
		for i, w := range writes {
			assert.Equal(t, w.commit, w.inside, "CommitInstant inside f")
			assert.Equal(t, commits[i].At, w.commit)
			assert.True(t, !w.commit.Before(w.call) && !w.end.Before(w.commit), "commit %v outside its window [%v, %v]", at(w.commit), at(w.call), at(w.end))
			assert.GreaterOrEqual(t, w.commit.Sub(w.call), ms(1), "a write takes its latency before committing")
		}
		for _, r := range reads {
			require.Equal(t, r.start, r.snap, "the snapshot is taken at the statement's start")
			before, atOrBefore := 0, 0
			for _, c := range commits {
				if c.At.Before(r.snap) {
					before++
				}
				if !c.At.After(r.snap) {
					atOrBefore++
				}
			}
			require.True(t, r.value >= before && r.value <= atOrBefore,
				"seed %d: read at +%v returned %d; commits before its start: %d (%d at or before)", seed, at(r.snap), r.value, before, atOrBefore)
			for _, c := range commits {
				if c.At.After(r.snap) && c.At.Before(r.end) {
					straddled++
					require.Less(t, r.value, int(c.Seq), "a commit during the latency was visible")
				}
			}
		}
	}
	t.Logf("%d commits landed inside a read's latency", straddled)
	require.Greater(t, straddled, 50, "the workload must make commits land inside reads")
}

// TestHookFixesLatencyAndFails: a Hook can pin one statement's latency
// exactly and fail another with the scenario's own error, returned as is.
func TestHookFixesLatencyAndFails(t *testing.T) {
	errBoom := fmt.Errorf("scenario says no")
	var (
		took   time.Duration
		gotErr error
		st     simdb.Stats
		calls  []simdb.Statement
	)
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: fixed(ms(5)), Statements: []string{"read"}, Hook: func(stm simdb.Statement) simdb.Fault {
			calls = append(calls, stm)
			switch len(calls) {
			case 1:
				return simdb.Fault{Latency: 2 * time.Second, Fixed: true}
			case 2:
				return simdb.Fault{Err: errBoom}
			}
			return simdb.Fault{}
		}})
		c, _ := db.Acquire(bg)
		defer c.Release()
		start := s.Now()
		_, _ = read(bg, s, c)
		took = s.Now().Sub(start)
		_, gotErr = read(bg, s, c)
		_, _ = db.Write(bg, "w", inc)
		st = db.Stats()
	})
	assert.Equal(t, 2*time.Second, took)
	assert.ErrorIs(t, gotErr, errBoom)
	assert.False(t, simdb.IsTransient(gotErr))
	require.Len(t, calls, 3)
	assert.Equal(t, simdb.Statement{Name: "read", Conn: 1, At: sim.Epoch}, calls[0])
	assert.Equal(t, simdb.Statement{Name: "w", Write: true, At: sim.Epoch.Add(2*time.Second + ms(5))}, calls[2])
	assert.Equal(t, int64(1), st.Injected)
	assert.Equal(t, int64(1), st.Rows, "a failed statement returns no rows")
	assert.Equal(t, int64(1), st.Commits)
}

// AfterSnapshot runs at the snapshot's instant, after the snapshot: a write
// it triggers commits at that instant and is not seen by the statement.
func TestAfterSnapshotActsAtTheSnapshotInstant(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 3}, func(s *sim.Sim) {
		ctx := context.Background()
		taken := s.NewEvent("taken")
		db, err := simdb.New(s, simdb.Config{PoolSize: 1, Latency: simdb.Latency{BaseMin: time.Millisecond, BaseMax: time.Millisecond}, Statements: []string{"read"},
			Hook: func(st simdb.Statement) simdb.Fault {
				if st.Name == "read" {
					return simdb.Fault{AfterSnapshot: taken.Set}
				}
				return simdb.Fault{Fixed: true}
			}}, 1)
		if err != nil {
			s.Failf("%v", err)
		}
		var got int
		var snapAt time.Time
		done := s.NewEvent("done")
		s.Go("reader", func() {
			defer done.Set()
			c, err := db.Acquire(ctx)
			if err != nil {
				s.Failf("%v", err)
			}
			defer c.Release()
			_ = s.Sleep(ctx, 5*time.Millisecond)
			snapAt = s.Now()
			got, _ = simdb.Query(ctx, c, "read", nil, func(v *int) int { return *v })
		})
		_ = taken.Wait(ctx)
		at, err := db.Write(ctx, "bump", func(v *int) { *v = 2 })
		if err != nil {
			s.Failf("%v", err)
		}
		_ = done.Wait(ctx)
		if got != 1 || !at.Equal(snapAt) {
			s.Failf("the statement saw %d (want 1), the write committed at %v, the snapshot was at %v", got, at, snapAt)
		}
	})
	require.NoError(t, res.Err)
}

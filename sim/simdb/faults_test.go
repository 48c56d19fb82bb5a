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

// TestCountersAreExact: a known workload gives exact statement, row,
// checkout and commit counts, per statement name and in the registry.
func TestCountersAreExact(t *testing.T) {
	var st simdb.Stats
	var snap map[string]int64
	var byName [2]int64
	var rowsByName [2]int64
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: simdb.DefaultLatency, Statements: []string{"one", "many"}})
		for range 3 {
			_, _ = db.Write(bg, "inc", inc)
		}
		for i := range 5 {
			c, _ := db.Acquire(bg)
			_, _ = simdb.Query(bg, c, "one", func(int) int { return 1 }, func(st *counter) int { return st.n })
			_, _ = simdb.Query(bg, c, "many", func(r []int) int { return len(r) }, func(st *counter) []int { return make([]int, i) })
			c.Release()
		}
		st = db.Stats()
		snap = db.Registry().Snapshot()
		byName = [2]int64{db.StatementsOf("one"), db.StatementsOf("many")}
		rowsByName = [2]int64{db.RowsOf("one"), db.RowsOf("many")}
	})
	assert.Equal(t, int64(10), st.Statements)
	assert.Equal(t, int64(5+0+1+2+3+4), st.Rows)
	assert.Equal(t, [2]int64{5, 5}, byName)
	assert.Equal(t, [2]int64{5, 10}, rowsByName)
	assert.Equal(t, int64(5), st.Checkouts)
	assert.Zero(t, st.CheckoutWaits)
	assert.Equal(t, int64(3), st.Commits)
	assert.Zero(t, st.Injected)
	assert.Equal(t, int64(5), snap[`simdb_statements_total{statement="one"}`])
	assert.Equal(t, int64(10), snap[`simdb_rows_total{statement="many"}`])
	assert.Equal(t, int64(5), snap["simdb_checkouts_total"])
	assert.Equal(t, int64(3), snap["simdb_commits_total"])
	assert.Equal(t, int64(0), snap["simdb_conns_in_use"])
	assert.Equal(t, int64(1), snap["simdb_conns_in_use_max"])
}

// errorRun runs n statements and n writes with the given error
// probabilities and returns which ones failed, as a string of 0/1, and the
// counters.
func errorRun(t *testing.T, seed uint64, n int, readP, writeP float64) (string, string, simdb.Stats) {
	var reads, writes []byte
	var st simdb.Stats
	run(t, seed, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{ReadErrorProb: readP, WriteErrorProb: writeP, Latency: simdb.DefaultLatency, Statements: []string{"read"}})
		c, _ := db.Acquire(bg)
		defer c.Release()
		for range n {
			_, err := read(bg, s, c)
			if err != nil && !simdb.IsTransient(err) {
				s.Failf("not transient: %v", err)
			}
			reads = append(reads, bit(err))
			_, err = db.Write(bg, "inc", inc)
			if err != nil && !simdb.IsTransient(err) {
				s.Failf("not transient: %v", err)
			}
			writes = append(writes, bit(err))
		}
		st = db.Stats()
		if got := int64(len(db.Commits())); got != st.Commits {
			s.Failf("log has %d commits, counter %d", got, st.Commits)
		}
		if st.Commits != int64(db.State().n) {
			s.Failf("%d commits but the state saw %d", st.Commits, db.State().n)
		}
	})
	return string(reads), string(writes), st
}

func bit(err error) byte {
	if err != nil {
		return '1'
	}
	return '0'
}

func count(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] == '1' {
			n++
		}
	}
	return n
}

// TestInjectedErrorRateAndDeterminism: over 5,000 statements and writes,
// the injected error rates are within a few standard deviations of the
// configured ones, failed writes do not commit, the counters match, the
// same seed fails the same statements and another seed different ones.
func TestInjectedErrorRateAndDeterminism(t *testing.T) {
	const n = 5000
	reads, writes, st := errorRun(t, 7, n, 0.1, 0.03)
	r, w := count(reads), count(writes)
	t.Logf("read errors %d/%d, write errors %d/%d", r, n, w, n)
	assert.InDelta(t, 0.1*n, r, 4*21.2, "read error count") // sd = sqrt(n p (1-p)) ≈ 21.2
	assert.InDelta(t, 0.03*n, w, 4*12.1, "write error count")
	assert.Equal(t, int64(r+w), st.Injected)
	assert.Equal(t, int64(n-w), st.Commits)
	assert.Equal(t, int64(w), st.WritesFailed)
	assert.Equal(t, int64(n-r), st.Rows, "failed statements return no rows")

	reads2, writes2, _ := errorRun(t, 7, n, 0.1, 0.03)
	assert.Equal(t, reads, reads2, "same seed, same failures")
	assert.Equal(t, writes, writes2)
	reads3, _, _ := errorRun(t, 8, n, 0.1, 0.03)
	assert.NotEqual(t, reads, reads3, "another seed, other failures")

	none, _, st0 := errorRun(t, 7, 200, 0, 0)
	assert.Zero(t, count(none))
	assert.Zero(t, st0.Injected)
}

// TestContextEndsStatementsAndWrites: a context that ends during a
// statement's latency returns its error at that instant and counts a
// canceled statement; a write canceled during its latency does not commit.
func TestContextEndsStatementsAndWrites(t *testing.T) {
	var qErr, wErr, preErr error
	var qAt, wAt time.Duration
	var st simdb.Stats
	var commits int
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: fixed(time.Second), Statements: []string{"read"}})
		c, _ := db.Acquire(bg)
		defer c.Release()
		ctx, cancel := s.WithTimeout(bg, 250*time.Millisecond)
		defer cancel()
		_, qErr = read(ctx, s, c)
		qAt = s.Elapsed()
		ctx2, cancel2 := s.WithTimeout(bg, 400*time.Millisecond)
		defer cancel2()
		_, wErr = db.Write(ctx2, "inc", inc)
		wAt = s.Elapsed()
		_, preErr = read(ctx, s, c) // already ended: never starts
		st = db.Stats()
		commits = len(db.Commits())
	})
	assert.ErrorIs(t, qErr, context.DeadlineExceeded)
	assert.Equal(t, 250*time.Millisecond, qAt)
	assert.ErrorIs(t, wErr, context.DeadlineExceeded)
	assert.Equal(t, 650*time.Millisecond, wAt)
	assert.ErrorIs(t, preErr, context.DeadlineExceeded)
	assert.Zero(t, commits)
	assert.Equal(t, int64(1), st.Canceled)
	assert.Equal(t, int64(1), st.Statements, "a statement whose context already ended does not start")
	assert.Equal(t, int64(1), st.WritesFailed)
	assert.Zero(t, st.Rows)
}

// TestFunctionsMustNotYield: a write function or query function that hits a
// scheduling point fails the run; so does CommitInstant outside a write.
func TestFunctionsMustNotYield(t *testing.T) {
	msg := failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{})
		_, _ = db.Write(bg, "yields", func(*counter) { s.Yield() })
	})
	assert.Contains(t, msg, "scheduling point")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Statements: []string{"q"}})
		c, _ := db.Acquire(bg)
		_, _ = simdb.Query(bg, c, "q", nil, func(*counter) int { s.Yield(); return 0 })
	})
	assert.Contains(t, msg, "scheduling point")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{})
		db.CommitInstant()
	})
	assert.Contains(t, msg, "outside a write")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{MaxCommits: 2})
		for range 3 {
			_, _ = db.Write(bg, "inc", inc)
		}
	})
	assert.Contains(t, msg, "commit log limit of 2")
}

// TestBadInputIsAnError: bad configs and bad calls give clear errors, never
// a panic.
func TestBadInputIsAnError(t *testing.T) {
	cases := []struct {
		cfg  simdb.Config
		want string
	}{
		{simdb.Config{PoolSize: -1}, "PoolSize"},
		{simdb.Config{MaxWaiters: -1}, "MaxWaiters"},
		{simdb.Config{MaxCommits: -1}, "MaxCommits"},
		{simdb.Config{ReadErrorProb: 1.5}, "ReadErrorProb"},
		{simdb.Config{WriteErrorProb: -0.1}, "WriteErrorProb"},
		{simdb.Config{Statements: []string{"a", "a"}}, "declared twice"},
		{simdb.Config{Statements: []string{"a b"}}, "space"},
		{simdb.Config{Statements: []string{""}}, "empty"},
		{simdb.Config{Latency: simdb.Latency{BaseMin: -1}}, "negative"},
		{simdb.Config{Latency: simdb.Latency{BaseMin: 2, BaseMax: 1}}, "above BaseMax"},
		{simdb.Config{Latency: simdb.Latency{SlowProb: 0.1}}, "slow tail"},
		{simdb.Config{Latency: simdb.Latency{SlowProb: 2, SlowMax: 1}}, "SlowProb"},
		{simdb.Config{Latency: simdb.Latency{SlowMin: 3, SlowMax: 2}}, "SlowMin"},
		{simdb.Config{Latency: simdb.Latency{SlowMax: 2 * time.Hour}}, "limit"},
	}
	for _, tc := range cases {
		err := tc.cfg.Validate()
		require.Error(t, err, "%+v", tc.cfg)
		assert.Contains(t, err.Error(), tc.want)
	}
	require.NoError(t, simdb.Config{}.Validate())

	var newErr, nilErr, unknownErr, nilQErr error
	run(t, 1, func(s *sim.Sim) {
		_, newErr = simdb.New(s, simdb.Config{PoolSize: -1}, counter{})
		db := newDB(s, simdb.Config{Statements: []string{"read"}})
		_, nilErr = db.Write(bg, "nil", nil)
		c, _ := db.Acquire(bg)
		defer c.Release()
		_, unknownErr = simdb.Query(bg, c, "nope", nil, func(*counter) int { return 0 })
		_, nilQErr = simdb.Query[counter, int](bg, c, "read", nil, nil)
	})
	assert.ErrorContains(t, newErr, "PoolSize")
	assert.ErrorContains(t, nilErr, "nil function")
	assert.ErrorIs(t, unknownErr, simdb.ErrUnknownStatement)
	assert.ErrorContains(t, unknownErr, `"nope"`)
	assert.ErrorContains(t, nilQErr, "query function")
	_, err := simdb.New[counter](nil, simdb.Config{}, counter{})
	assert.ErrorContains(t, err, "sim.Sim")
}

// TestSameSeedSameTrace: a busy database workload hashes to the same trace
// on the same seed and to different ones on different seeds.
func TestSameSeedSameTrace(t *testing.T) {
	body := func(s *sim.Sim) {
		db := newDB(s, simdb.Swarm(s.Rand(), simdb.Config{Latency: simdb.DefaultLatency, Statements: []string{"read"}}))
		s.Note("%v", db.Config())
		wg := s.NewWaitGroup("all")
		for i := range 6 {
			wg.Add(1)
			s.Go(fmt.Sprint("client", i), func() {
				defer wg.Done()
				for range 20 {
					if s.Rand().IntN(3) == 0 {
						_, _ = db.Write(bg, "inc", inc)
						continue
					}
					ctx, cancel := s.WithTimeout(bg, 500*time.Millisecond)
					c, err := db.Acquire(ctx)
					if err == nil {
						_, _ = read(ctx, s, c)
						c.Release()
					}
					cancel()
				}
			})
		}
		_ = wg.Wait(bg)
	}
	seen := map[uint64]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := run(t, seed, body), run(t, seed, body)
		require.Equal(t, a.Hash, b.Hash, "seed %d", seed)
		require.Equal(t, a.Header, b.Header)
		require.False(t, seen[a.Hash], "two seeds, one trace")
		seen[a.Hash] = true
	}
}

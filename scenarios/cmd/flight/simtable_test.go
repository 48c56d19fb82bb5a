package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim/simdb"
)

// quantileCell is one measured distribution as quantileRow prints it.
var quantileCell = regexp.MustCompile(`^min \S+, p10 \S+, p50 \S+, p90 \S+, p95 \S+, p99 \S+, max (\S+) \(n=(\d+)\)$`)

// tableRows parses comparison's rows into quantity → [real, simulated].
func tableRows(t *testing.T, out string) map[string][2]string {
	t.Helper()
	rows := map[string][2]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 3 || strings.HasPrefix(line, "|---") {
			continue
		}
		rows[strings.TrimPrefix(f[0], "| ")] = [2]string{f[1], strings.TrimSuffix(f[2], " |")}
	}
	return rows
}

// measured asserts a cell is a distribution of at least one sample and
// returns its max.
func measured(t *testing.T, what, cell string) time.Duration {
	t.Helper()
	m := quantileCell.FindStringSubmatch(cell)
	require.NotNil(t, m, "%s: %q is not a measured distribution", what, cell)
	n, _ := strconv.Atoi(m[2])
	assert.Positive(t, n, what)
	d, err := time.ParseDuration(m[1])
	require.NoError(t, err, what)
	return d
}

// TestSimulatedColumnIsMeasured: the simulated flight (no servers) fills
// the table's simulated column from sim/simdb's own timings: every
// distribution has samples, a statement takes time, a snapshot lags its
// issue, and the churn's starved pools make checkouts wait, which the
// model's FIFO pool must show. The real column says it was not flown.
func TestSimulatedColumnIsMeasured(t *testing.T) {
	sf, err := simulate(Options{Seed: 1, Relays: 2, Rounds: 1, Long: 1, Churn: 3 * time.Second})
	require.NoError(t, err)
	var sb strings.Builder
	comparison(&sb, nil, sf)
	t.Log("\n" + sb.String())
	rows := tableRows(t, sb.String())
	for _, q := range []string{"pool wait (Acquire → checkout), no fault", "statement (issue → return), no fault",
		"snapshot lag (send → statement start), no fault", "pool wait, churn with faults", "statement, churn with faults"} {
		require.Contains(t, rows, q)
		assert.Equal(t, notFlown, rows[q][0], q)
		measured(t, q, rows[q][1])
	}
	assert.Positive(t, measured(t, "statement", rows["statement (issue → return), no fault"][1]))
	assert.Positive(t, measured(t, "lag", rows["snapshot lag (send → statement start), no fault"][1]))
	assert.Positive(t, measured(t, "pool wait", rows["pool wait, churn with faults"][1]), "a starved pool queues")
	assert.Positive(t, sf.Faults["pool-starved"], "the schedule starves a pool")
	q := rows["pool waits over 1ms (queued behind busy connections), churn"]
	assert.Equal(t, notFlown, q[0])
	cell, share, ok := strings.Cut(q[1], "; ")
	require.True(t, ok, "%q has no share of checkouts", q[1])
	assert.GreaterOrEqual(t, measured(t, "queued", cell), queuedOver, "only waits past the threshold")
	assert.Regexp(t, `^\d+ of \d+ checkouts$`, share)
	// pgxpool's life of a connection: the calm reads, one at a time, open
	// one connection per relay; the churn's concurrent ones open more.
	assert.Equal(t, int64(2), sf.Calm.Connects, "one connection per relay in the calm phase")
	assert.Greater(t, sf.Churn.Connects, int64(0), "the churn opens connections the calm phase did not need")
	assert.Regexp(t, `^2 / \d+ opened \(\S+ / \S+ each on average\), 0 / \d+ idle ones pinged$`, rows["connections opened, no fault / churn"][1])
}

func TestQueuedKeepsOnlyTheWaitsPastTheThreshold(t *testing.T) {
	ns := []int64{0, int64(queuedOver), int64(queuedOver) + 1, int64(300 * time.Millisecond)}
	assert.Equal(t, "min 1.000001ms, p10 1.000001ms, p50 1.000001ms, p90 1.000001ms, p95 1.000001ms, p99 1.000001ms, max 300ms (n=2); 2 of 4 checkouts", queued(ns, true))
	assert.Equal(t, "none; 0 of 1 checkouts", queued([]int64{5}, true))
	assert.Equal(t, notFlown, queued(nil, false))
}

// TestSimulatedPlanIsTheFlights: the simulated churn's fault schedule is
// the flight's for the same options: the same draws from the same seed.
func TestSimulatedPlanIsTheFlights(t *testing.T) {
	o := Options{Seed: 7, Relays: 3, Rounds: 2, Long: 1, Churn: 4 * time.Second}
	a, b := planSim(o), planSim(o)
	assert.Equal(t, a.faults, b.faults)
	assert.NotEmpty(t, a.faults)
	c := planSim(Options{Seed: 8, Relays: 3, Rounds: 2, Long: 1, Churn: 4 * time.Second})
	assert.NotEqual(t, a.faults, c.faults, "the schedule follows the seed")
	_, err := simulate(Options{Seed: 1, Relays: 2, MaxConns: 9})
	assert.Error(t, err, "a pool size a pods world cannot give each pod")
}

// TestSimulatedResetBreaksEachConnectionOnce: a reset_peer toxic breaks
// the statement in flight over each pooled connection once, and no new
// connection opens while it lasts, as the real flight's few statement
// errors and its failed Acquire calls show;
// a reset that failed every statement in its window overstated it by two
// orders of magnitude (230 errors against the real 6, on seed 1).
func TestSimulatedResetBreaksEachConnectionOnce(t *testing.T) {
	sf, err := simulate(Options{Seed: 1, Relays: 2, Rounds: 1, Long: 1, Churn: 10 * time.Second})
	require.NoError(t, err)
	resets := sf.Faults["db-reset"]
	require.Positive(t, resets, "seed 1's schedule resets a connection")
	assert.Positive(t, sf.Churn.StatementErrs, "a reset breaks the statement in flight")
	assert.LessOrEqual(t, sf.Churn.StatementErrs, int64(resets*simdb.DefaultPoolSize), "each of a pool's connections breaks once per reset")
	assert.NotEmpty(t, sf.Churn.AcquireErrs, "a broken connection cannot be opened again while the reset lasts")
}

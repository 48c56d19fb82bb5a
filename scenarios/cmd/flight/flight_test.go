package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/edge/flight"
	"github.com/windtunnel/windtunnel/impl/edge/testenv"
)

// servers returns the flight's servers, or skips or fails as testenv
// decides (make integration starts all three).
func servers(t *testing.T) Options {
	t.Helper()
	o := Options{PGURL: testenv.PostgresURL(t), RedisAddr: testenv.RedisOptions(t).Addr}
	v := os.Getenv(flight.EnvToxiproxy)
	switch a, msg := testenv.Decide(flight.EnvToxiproxy, v, os.Getenv(testenv.EnvIntegration)); a {
	case testenv.Skip:
		t.Skip(msg)
	case testenv.Fail:
		t.Fatal(msg)
	}
	o.ToxiAddr = v
	return o
}

// The short flight of make test's integration stage: two relay
// processes, one fast and one slow OC-2 round per revocation kind, one
// 10 s round (OC-7, MS-2, MS-10), OC-10's cross-community asks and MS-3's
// one-relay phase, judged on the recorded history with the bounds plus
// the measured uncertainty; OC-2's tightness at least 0.9 on purpose; then
// the mutant without the age check, which the same flight must catch.
func TestShortFlight(t *testing.T) {
	o := servers(t)
	o.Seed, o.Relays, o.Rounds, o.Long, o.MS3, o.Churn = 1, 2, 2, 1, true, 3*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, o, nil)
	require.NoError(t, err)
	var sb stringsBuilder
	report(&sb, res)
	t.Log("\n" + sb.String())
	require.NotEmpty(t, res.Verdicts)
	for _, v := range res.Verdicts {
		assert.True(t, v.Holds, "%s: %s", v.Claim, v.Witness)
		assert.Positive(t, v.Reads, v.Claim)
	}
	oc2 := res.Verdicts[0]
	require.Equal(t, "OC-2", oc2.Claim)
	assert.GreaterOrEqual(t, oc2.Tight, 0.9, "OC-2's race must reach 0.9 of the window")
	assert.Empty(t, res.untight(), "every race reaches 0.9 of its bound")
	assert.Zero(t, res.Cross.Grants, "OC-10")
	assert.Positive(t, res.Cross.Reads, "OC-10")
	require.NotNil(t, res.Lin)
	assert.Equal(t, "Ok", res.Lin.Verdict, "MS-3: %v", res.Lin.Keys)
	assert.Len(t, res.Verdicts, 4, "OC-2, OC-7, MS-2, MS-10")
	assert.Zero(t, res.U.Clock.Offset, "one kernel clock: no relay's or server's stamp falls outside its round trip")
	assert.Positive(t, res.U.Clock.Samples)

	// The real servers' distributions beside the simulated flight's, both
	// measured: every row of both columns a distribution with samples.
	sf, err := simulate(o)
	require.NoError(t, err)
	var cmp stringsBuilder
	comparison(&cmp, &res, sf)
	t.Log("\n" + cmp.String())
	rows := tableRows(t, cmp.String())
	for _, q := range []string{"pool wait (Acquire → checkout), no fault", "statement (issue → return), no fault",
		"snapshot lag (send → statement start), no fault", "pool wait, churn with faults", "statement, churn with faults"} {
		measured(t, "real "+q, rows[q][0])
		measured(t, "simulated "+q, rows[q][1])
	}

	o, err = o.forMutant("oc-no-age-check")
	require.NoError(t, err)
	o.Rounds = 1
	mres, err := Run(ctx, o, nil)
	require.NoError(t, err)
	caught, line := mutantVerdict(o.Mutant, mres)
	t.Log(line)
	assert.True(t, caught, line)
}

package pods_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
)

// TestStalenessBothIsTheTwoClasses: StalenessBoth's grant and deny reports
// are Staleness's for each class of the same answers, on membership worlds
// that hold a window (the cross-check then runs, once) and on ones that
// break it (it does not), and it fails where Staleness fails.
func TestStalenessBothIsTheTwoClasses(t *testing.T) {
	held, broken := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		for _, within := range []time.Duration{time.Millisecond, 12 * time.Second} {
			var grant, deny, bothGrant, bothDeny pods.Staleness
			var errs [3]error
			res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
				w, err := pods.FlyMS(s, pods.MSOpts{Pods: 2, LossyPod: 1})
				if err != nil {
					s.Failf("%v", err)
				}
				grant, errs[0] = w.Staleness(true, within, pods.Membership)
				deny, errs[1] = w.Staleness(false, within, pods.Membership)
				bothGrant, bothDeny, errs[2] = w.StalenessBoth(within, pods.Membership)
			})
			require.NoError(t, res.Err)
			assert.Equal(t, errs[0] != nil || errs[1] != nil, errs[2] != nil, "seed %d within %v: %v", seed, within, errs)
			assert.Equal(t, grant, bothGrant, "seed %d within %v: grant-staleness", seed, within)
			assert.Equal(t, deny, bothDeny, "seed %d within %v: deny-staleness", seed, within)
			require.Positive(t, grant.Reads+deny.Reads, "seed %d: the world answered", seed)
			if grant.Holds(within) && deny.Holds(within) {
				held++
			} else {
				broken++
			}
		}
	}
	assert.Positive(t, held, "some worlds held the window: the cross-check ran")
	assert.Positive(t, broken, "some broke it")
}

package pods_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

func TestMSChurnValidateRejectsBadWorkloads(t *testing.T) {
	ok := pods.DefaultMSChurn()
	require.NoError(t, ok.Validate(3))
	for name, f := range map[string]func(*pods.MSChurn){ //windtunnel:unordered independent cases
		"no users":        func(c *pods.MSChurn) { c.Users = nil },
		"no pause":        func(c *pods.MSChurn) { c.ClientPause = 0 },
		"no round bound":  func(c *pods.MSChurn) { c.MaxRounds = 0 },
		"bad probability": func(c *pods.MSChurn) { c.GrantProb = 1.5 },
		"unknown pod":     func(c *pods.MSChurn) { c.ReadPods = []int{3} },
	} {
		c := pods.DefaultMSChurn()
		f(&c)
		assert.Error(t, c.Validate(3), name)
	}
}

// The workload writes only through WritePods, reads only on ReadPods, every
// (read pod, user) client reads every channel, and everything stops at the
// horizon.
func TestMSChurnRunsItsRoles(t *testing.T) {
	c := pods.DefaultMSChurn()
	c.WritePods, c.ReadPods = []int{0}, []int{1}
	c.Horizon = 5 * time.Second
	var w *pods.World
	var end time.Duration
	res := sim.Run(sim.Config{Seed: 7}, func(s *sim.Sim) {
		// No require inside the run: its main task is not the test's goroutine.
		tables, err := c.Tables()
		if err == nil {
			w, err = pods.NewWorld(s, pods.Config{Pods: 2, DB: simdb.Config{Latency: simdb.DefaultLatency}}, tables)
		}
		if err == nil {
			err = c.TrackAll(w)
		}
		if err == nil {
			_, err = c.Run(context.Background(), w)
		}
		if err != nil {
			s.Failf("%v", err)
		}
		end = s.Elapsed()
	})
	require.NoError(t, res.Err)
	assert.Less(t, end, c.Horizon+2*time.Second, "the workload stops soon after its horizon")
	seen := map[pods.Key]bool{}
	for _, r := range w.History.Reads {
		assert.Equal(t, 1, r.Pod, "reads only on pod 1")
		assert.Equal(t, pods.Membership, r.Class)
		seen[r.Key] = true
	}
	assert.Len(t, seen, len(c.Users)*len(c.Channels), "every (user, channel) is read")
	require.NotEmpty(t, w.History.Writes)
	for _, wr := range w.History.Writes {
		assert.Equal(t, 0, wr.Pod, "writes only through pod 0")
	}
}

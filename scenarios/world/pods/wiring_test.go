package pods

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// TestEveryPodHearsItsOwnWrites: NewWorld, which every pods-based world is
// built by, subscribes each pod's relay to the bus under the pod's name,
// and a write through a pod's relay reaches every pod, the writer's own
// subscription included (as a relay subscribed to Redis hears its own
// PUBLISH).
func TestEveryPodHearsItsOwnWrites(t *testing.T) {
	var subs []string
	var delivered []int
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		k, ch, u := authz.NewID('k', 1), authz.NewID('h', 1), authz.NewID('u', 1)
		tables := authztest.NewTables()
		if err := tables.AddChannel(authztest.Channel{ID: ch, Community: k}); err != nil {
			s.Failf("%v", err)
		}
		w, err := NewWorld(s, Config{Pods: 3, Bus: simbus.Config{Faults: simbus.Reliable()}}, tables)
		if err != nil {
			s.Failf("%v", err)
		}
		for _, sub := range w.Bus.Subscribers() {
			subs = append(subs, sub.Name())
		}
		if err := w.Write(context.Background(), w.Pods[1], 0, GrantMember, k, u, ch); err != nil {
			s.Failf("%v", err)
		}
		_ = s.Sleep(context.Background(), time.Second)
		for _, p := range w.Pods {
			delivered = append(delivered, p.Delivered)
		}
	})
	require.NoError(t, res.Err)
	require.Equal(t, []string{"pod0", "pod1", "pod2"}, subs)
	require.Equal(t, []int{1, 1, 1}, delivered, "the writer pod1 hears its own invalidation too")
}

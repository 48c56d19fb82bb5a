package ms

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/stale"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// subscribeSeed is one seed of MS-12.
type subscribeSeed struct {
	smp   claims.Sample // subscription denials that were not true at any instant of the request
	write claims.Sample // deny-staleness of the write checks
}

// TestMS12_SubscriptionConfirmsMissingMembership checks MS-12: cached
// write checks can briefly deny a just-granted member, but an explicit
// channel subscription confirms a missing membership against the database
// before it rejects. In MS-10's world (writes on pod0, checks on pod1,
// which loses most invalidations, and pod2), a third of the client rounds
// are subscriptions: every subscription denial must have deny-staleness 0
// (it is the database's answer at the confirming point check), while the
// write checks' deny-staleness stays below the freshness bound. The seeds
// must show subscriptions granted a membership the pod's snapshot lacked
// (the probe), else the check would hold without confirming anything.
func TestMS12_SubscriptionConfirmsMissingMembership(t *testing.T) {
	fresh := claims.Get("MS-10", "freshness")
	claims.Run(t, claims.Check[subscribeSeed]{
		Claim: "MS-12", Options: simtest.Options{Seeds: 6},
		Fly: func(s *sim.Sim, _ claims.Bound) (subscribeSeed, error) {
			var out subscribeSeed
			w, err := pods.FlyMS(s, pods.MSOpts{Pods: 3, LossyPod: 1, Tweak: func(c *pods.MSChurn) {
				c.WritePods, c.ReadPods = []int{0}, []int{1, 2}
				c.GrantProb, c.SubscribeProb = 0.6, 0.33
			}})
			if err != nil {
				return out, err
			}
			st, err := w.Staleness(false, 0, pods.Subscription)
			if err != nil {
				return out, fmt.Errorf("MS-12: %w", err)
			}
			out.smp.Of = int64(st.Reads)
			for _, v := range st.Values {
				if v > 0 {
					out.smp.Wrongly(func() string {
						return "a subscription was denied from a stale snapshot: " + stale.Witness(st.Witness, w.History.Describe)
					})
				}
			}
			if st.Phantoms > 0 {
				out.smp.Wrong += int64(st.Phantoms)
			}
			if out.write, err = staleness(w, fresh, false, true); err != nil {
				return out, err
			}
			if out.smp.Wrong > 0 {
				return out, fmt.Errorf("MS-12: %d subscription denials were stale (max %v): %s", out.smp.Wrong, st.MaxStaleness, out.smp.Witness)
			}
			return out, nil
		},
		Sample: func(r subscribeSeed) claims.Sample { return r.smp },
		Probes: []claims.Probe{{Name: pods.ProbeSubscriptionConfirmedMember, What: "a subscription was granted a membership the pod's latest write check had denied", Min: 3}},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d subscription denials stale (deny-staleness > 0); %d subscriptions granted a membership the snapshot lacked; write checks bounded by MS-10's %s: %s",
				o.Wrong, o.Of, o.Probes[0].Count, fresh.Format(fresh.Value), o.SeedsText())
		},
	})
}

package oc

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC10_NoCrossCommunityGrant checks OC-10: a reader is never granted a
// channel of another community. Member readers hold memberships in a second
// community and ask about both; the world checks every answer against the
// tables (pods.World.Violations).
func TestOC10_NoCrossCommunityGrant(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-10", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			w, _, err := pods.FlyChurn(s, pods.ChurnOpts{})
			if err != nil {
				return smp, err
			}
			smp.Of = int64(len(w.History.Reads))
			smp.Wrong = int64(w.Violations.Count("OC-10"))
			if err := w.Violations.Err("OC-10"); err != nil {
				smp.Witness = err.Error()
				return smp, err
			}
			return smp, nil
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d cross-community grants in %d recorded answers", o.Wrong, o.Of)
		},
	})
}

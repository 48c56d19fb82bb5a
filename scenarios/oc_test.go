package scenarios

import (
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// OC-2: with lost invalidations, a non-member reader on any pod can be
// granted a just-revoked open channel for at most 1 s, counted from the
// start of the open-set read. The churn mixes every revocation kind with
// swarm-chosen bus faults and slow open-set reads.
func TestOC2_LostInvalidationAgeBound(t *testing.T) {
	c := &stalenessCheck{id: "OC-2", classes: []relay.Class{relay.NonMember}, grants: true,
		bound: time.Second, what: "grant-staleness of non-member reads"}
	sum := simtest.Run(t, simtest.Options{Seeds: 20}, func(s *sim.Sim) error {
		run, err := flyChurn(s, churnOpts{slowOpenReads: true})
		if err != nil {
			return err
		}
		return c.check(s.Seed(), run.w.History, run.w.Tracker.Truth())
	})
	c.report(t, sum.Seeds, sum.Failures, "revocations: made private, unlisted, deleted; invalidations lost, delayed, duplicated or reordered per the seed's swarm plan")
}

package ms

import (
	"fmt"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestMS9_WriterPodReadsItsOwnWrite checks MS-9 on the production wiring
// of the writing pod (pods.FlyWriterPod): relay.Changed drops the user's
// snapshot locally before it publishes, so a membership check on the
// writing pod that starts once the publish reaches the bus, or after the
// write returned, answers the tables, before the bus delivers the
// invalidation to that pod and when the bus never does, whether the
// publish fails, is cancelled, is slow or succeeds, also when a load of the
// user raced the commit on that pod (MS-3's fence keeps it out, so nothing
// is excused). The relay's counters must equal the world's account on
// every pod.
func TestMS9_WriterPodReadsItsOwnWrite(t *testing.T) {
	var probes []claims.Probe
	probes = append(probes,
		claims.Probe{Name: pods.ProbeWriterReadBeforeOwnDelivery, What: "a check on the writing pod answered before its own invalidation came back", Min: 20},
		claims.Probe{Name: pods.ProbeWriterReadDuringPublish, What: "a check on the writing pod began during the publish and answered before any delivery", Min: 10},
		claims.Probe{Name: pods.ProbeWriterRacedFill, What: "a load of the written user was in flight on the writing pod across the commit", Min: 3})
	probes = append(probes, pods.FaultProbes(pods.CellsOf("Relay"))...)
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "MS-9", Options: simtest.Options{Seeds: 6},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			var smp claims.Sample
			res, err := pods.FlyWriterPod(s, pods.MS, 0)
			if err != nil {
				return smp, err
			}
			smp.Of, smp.Wrong = int64(res.Reads), int64(res.Wrongs)
			smp.Tally = map[string]int64{"raced": int64(res.Raced)}
			if res.Wrongs > 0 {
				smp.Witness = strings.Join(res.Wrong, "; ")
				return smp, fmt.Errorf("MS-9: %d wrong on the writing pod: %s", res.Wrongs, smp.Witness)
			}
			return smp, nil
		},
		Probes: probes,
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d checks on the writing pod (or relay counters) wrong after its own write, %d of them with a load of the user raced across the commit (none excused: MS-3's fence)", o.Wrong, o.Of, o.Tally["raced"])
		},
		Note: "three pods, deliveries 50–400 ms, one deaf pod in a third of the seeds; publishes failing, cancelled, slow or clean in turn; a background reader per pod, a third of its reads 50–600 ms",
	})
}

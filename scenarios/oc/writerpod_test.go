package oc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestOC5_WriterPodReadsItsOwnWrite checks OC-5 on the production wiring
// of the writing pod (pods.FlyWriterPod): relay.Changed drops the halves a
// change concerns locally before it publishes, so a lookup on the writing
// pod that starts once the publish reaches the bus, or after the write
// returned, answers the tables, before the bus delivers the invalidation
// to that pod and when the bus never does, whether the publish fails, is
// cancelled, is slow or succeeds. A lookup whose half had a fill raced
// across the commit on that pod is excused when stale (OC-4's open-set
// fill, OC-6's member half), and counted apart. The relay's counters must
// equal the world's account on every pod.
func TestOC5_WriterPodReadsItsOwnWrite(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "OC-5", Options: simtest.Options{Seeds: 6},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) {
			return writerPodSample(s, pods.OC, "OC-5", claims.Get("OC-2", "open set max age").Duration()+100*time.Millisecond)
		},
		Probes: writerPodProbes(),
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d lookups on the writing pod (or relay counters) wrong after its own write; %d had a fill of the written half raced across the commit, %d of them stale (OC-4, OC-6: excused)", o.Wrong, o.Of, o.Tally["raced"], o.Tally["excused"])
		},
		Note: "three pods, deliveries 50–400 ms, one deaf pod in a third of the seeds; publishes failing, cancelled, slow or clean in turn; a background reader per pod, a third of its reads 50–600 ms",
	})
}

func writerPodProbes() []claims.Probe {
	probes := []claims.Probe{
		{Name: pods.ProbeWriterReadBeforeOwnDelivery, What: "a read on the writing pod answered before its own invalidation came back", Min: 20},
		{Name: pods.ProbeWriterReadDuringPublish, What: "a read on the writing pod began during the publish and answered before any delivery", Min: 10},
		{Name: pods.ProbeWriterRacedFill, What: "a fill of the written half was in flight on the writing pod across the commit", Min: 3},
	}
	probes = append(probes, pods.FaultProbes(pods.CellsOf("Relay"))...)
	return probes
}

func writerPodSample(s *sim.Sim, f pods.Family, claim string, settle time.Duration) (claims.Sample, error) {
	var smp claims.Sample
	res, err := pods.FlyWriterPod(s, f, settle)
	if err != nil {
		return smp, err
	}
	smp.Of = int64(res.Reads)
	smp.Wrong = int64(res.Wrongs)
	smp.Tally = map[string]int64{"raced": int64(res.Raced), "excused": int64(res.Excused)}
	if res.Wrongs > 0 {
		smp.Witness = strings.Join(res.Wrong, "; ")
		return smp, fmt.Errorf("%s: %d wrong on the writing pod: %s", claim, res.Wrongs, smp.Witness)
	}
	return smp, nil
}

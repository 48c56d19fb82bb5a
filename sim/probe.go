package sim

// Probe counts one occurrence of a rare event the run reached, such as "an
// invalidation applied while a read of the same key was in flight". Probes
// are observations made by the world and the checks, never hooks in the
// code under test. A claim check declares which probes its seeds must reach
// (FoundationDB's code probes, Antithesis's "sometimes" assertions). So a
// check whose seeds never produce the interleaving it is about fails
// instead of passing vacuously. Result.Probes holds the counts.
//
// Probe is not a scheduling point and touches no state a task can observe,
// so it does not change the schedule, the trace or the exploration.
func (s *Sim) Probe(name string) {
	if s.probes == nil {
		s.probes = map[string]int64{}
	}
	s.probes[name]++
}

// probeCount returns how often the run has reached a probe so far.
func (s *Sim) probeCount(name string) int64 { return s.probes[name] }

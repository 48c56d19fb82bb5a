// Package claims is where the claims of CLAIMS.md meet their checks: the
// claims themselves (Claims, the embedded CLAIMS.md), the numbers every
// check takes its bound from (Table, Get), and the declaration a claim check
// is written as (Check), which Run flies and judges. The records a check
// files for the audit are package findings'.
//
// A first claim check needs six things:
//
//   - Check: the declaration, data only. It holds the claim's ID, its
//     Bound's name, the harness's Options (Seeds), Fly and Measured.
//   - Bound: the claim's number from Table (claims.Get), handed to Fly. A
//     check never takes a bound from anywhere else.
//   - Fly: one seed's world. Build it from the sim, run the workload,
//     return what it measured.
//   - Sample: what one seed measured, its worst figure and how many
//     observations were wrong (Observe, Wrongly). Fly returns one, or a
//     result that Check.Sample turns into one.
//   - Outcome: the seeds' samples merged. Measured writes the record's
//     text from it (WorstText, SeedsText), never from what was expected.
//   - Run: flies the seeds through sim/simtest, merges their samples,
//     compares the worst figure with the bound and checks the probes. It
//     files one record (findings.Report); the test fails when the claim is
//     violated.
//
// A test runs a check with claims.Run(t, check); Example shows one whole.
// Probes are added when the claim is about a rare interleaving; the hooks
// in Check.More (Artifact, Explain, Judge, NoteFrom) are for the few checks
// that need them.
//
// Terms of art:
//
//   - Fly: the function that runs one seed: the world, the workload, the
//     measurement. Its error fails the seed.
//   - Sample: one seed's figure (Worst, Seen), its observations (Of) and
//     the wrong ones (Wrong), with a witness. Check.Sample extracts it from
//     Fly's result; it is the identity for a Check[Sample].
//   - Sampled: a check that samples a random workload instead of driving
//     the design to its bound. It is not held to the bound's tightness.
//   - Tight: a bound the design may reach (Bound.Tight). Its directed
//     checks must drive the worst figure to within findings.MinTightness of
//     it, or they cannot tell it from a wider one.
//   - Judge: a check's own verdict rule. It serves a documented deviation
//     the check must reproduce (known-deviation) instead of a bound that
//     holds.
//   - probe: a rare event a seed reaches (sim.Sim.Probe). Check.Probes says
//     how often the seeds must reach it, so a check whose seeds never
//     produce its interleaving fails instead of passing vacuously.
//   - screen: the audit's one-seed pass over a mutant (findings.ScreenEnv).
//     A check then fails only on what a seed breaks on its own, not on the
//     rates over seeds (tightness, probes, a deviation's reproduction).
//   - Keep: the simulator's question whether a run includes one optional
//     operation or fault (sim.Sim.Keep). A seed keeps everything, a
//     shrinker's replay drops what it can, so a workload asks Keep before
//     each operation it may drop.
//
// A claim served by several tests (OC-2 for each revocation kind) is
// violated if any of them is: the audit merges every test's records per
// claim ID.
package claims

package findings

import "os"

// ScreenEnv is the environment variable that makes every check screen
// ("1"): the audit's first, one-seed pass over a mutant. A screening check
// fails only on what its seeds break on their own, each whatever the others
// did: a failed seed, a wrong observation, a figure beyond the bound. It
// does not hold its seeds to what is a rate over all of them (the bound's
// tightness, the probes' counts, a documented deviation's reproduction),
// which one seed cannot meet and which says nothing about the mutant. A
// mutant that passes the screen runs again over its whole seed budget,
// judged in full.
const ScreenEnv = "WINDTUNNEL_CLAIMS_SCREEN"

// Screening reports whether the checks screen (ScreenEnv).
func Screening() bool { return os.Getenv(ScreenEnv) == "1" }

package mutants

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// Mutant is a small, realistic change to one production file: Old must occur
// in File exactly once and is replaced by New. The change is applied at build
// time through go test -overlay, so production code carries no hooks for it.
type Mutant struct {
	ID     string   // short and unique: "oc-no-age-check"
	Claims []string // the claims whose checks must catch it
	What   string   // the mistake, in words
	File   string   // relative to the module root
	Old    string
	New    string
	// Tests is the -run pattern of the checks that must catch it, in Pkg
	// (the claim family's test package, "./scenarios/oc").
	Tests string
	Pkg   string
	// Kind is KindCatalogue for a hand-written mutant, KindTolerance for
	// one derived from the claims table (tolerance.go).
	Kind string
	// Seeds is the seed budget within which it must be caught (0: the
	// audit's default).
	Seeds int
	// Race runs its checks under the race detector (go test -race), on its
	// family's race schema build (BuildRaceSchema) or, failing that, a
	// build of its own: for a data race the simulator cannot see. The
	// simulator runs one task at a time and orders every switch. So a lock
	// left out around code with no scheduling point inside changes nothing
	// it can observe. The checks on real goroutines, under the race
	// detector, see the unordered accesses. They run at each of RaceCPUs.
	Race bool
}

// RaceCPUs are the GOMAXPROCS values (go test -cpu) a Race mutant's checks
// run at, and make race's RaceFree checks. One processor first: there the
// goroutines interleave only where the checks and their pool yield. So the
// verdict does not hang on how many cores a loaded machine lends the run.
// Then two, in parallel.
const RaceCPUs = "1,2"

// RaceRuns is how many times a Race mutant's checks run at each of
// RaceCPUs, each run a process of its own (the detector reports a race
// once per process). The race detector sees only the accesses a run makes,
// so a check may catch a mutant on one run and miss it on the next. The
// audit runs them all; a run the mutant survived is a problem even when
// another caught it.
const RaceRuns = 3

// Mutant kinds, as audit.json reports them.
const (
	KindCatalogue = "catalogue"
	KindTolerance = "tolerance"
)

// Apply writes the mutated file and an overlay description into dir and
// returns the overlay's path. A snippet that does not occur exactly once is
// an error: a mutant that silently stopped applying would count as caught.
func (m Mutant) Apply(root, dir string) (string, error) {
	src := filepath.Join(root, m.File)
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("mutant %s: %v", m.ID, err)
	}
	if n := strings.Count(string(data), m.Old); n != 1 {
		return "", fmt.Errorf("mutant %s: its snippet occurs %d times in %s (want exactly once): %q", m.ID, n, m.File, m.Old)
	}
	if m.Old == m.New {
		return "", fmt.Errorf("mutant %s: old and new snippets are identical", m.ID)
	}
	mutated := strings.Replace(string(data), m.Old, m.New, 1)
	// The mutated file lives in a directory whose name starts with "_", so
	// that go build ./... and go vet ./... never mistake it for a package.
	src2 := filepath.Join(dir, "_src")
	if err := os.MkdirAll(src2, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(src2, filepath.Base(m.File))
	if err := os.WriteFile(dst, []byte(mutated), 0o644); err != nil {
		return "", err
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	absDst, err := filepath.Abs(dst)
	if err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {absSrc: absDst}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// Validate checks the catalogue's shape: unique IDs, known claims, a test
// pattern, and a real change.
func Validate(ms []Mutant, cs []claims.Claim) error {
	known := map[string]bool{}
	for _, c := range cs {
		known[c.ID] = true
	}
	ids := map[string]bool{}
	for _, m := range ms {
		switch {
		case m.ID == "" || ids[m.ID]:
			return fmt.Errorf("mutant %q: empty or duplicate ID", m.ID)
		case len(m.Claims) == 0:
			return fmt.Errorf("mutant %s: names no claim", m.ID)
		case m.Tests == "":
			return fmt.Errorf("mutant %s: no test pattern", m.ID)
		case !strings.HasPrefix(m.Pkg, "./scenarios/"):
			return fmt.Errorf("mutant %s: its checks' package %q is not a claim family under ./scenarios/", m.ID, m.Pkg)
		case m.Old == "" || m.Old == m.New:
			return fmt.Errorf("mutant %s: no change", m.ID)
		case m.Race && !strings.Contains(m.Tests, "RaceFree"):
			// make race runs the RaceFree checks on the production code:
			// the control that shows they pass without the mutant.
			return fmt.Errorf("mutant %s: a Race mutant's checks are its family's RaceFree checks (make race runs them on the production code), not %q", m.ID, m.Tests)
		}
		for _, c := range m.Claims {
			if !known[c] {
				return fmt.Errorf("mutant %s: unknown claim %s", m.ID, c)
			}
		}
		ids[m.ID] = true
	}
	return nil
}

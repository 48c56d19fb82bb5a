package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
)

// rerunSet is what -rerun takes from an earlier run's report: the keys of
// the mutants that survived without an argument or could not be run, and
// the packages they belong to. After a check is strengthened, running only
// these confirms the triage without running every mutant again.
type rerunSet struct {
	keys map[string]bool
	pkgs []string // sorted
}

// readRerun reads the earlier report at path. A report that is not one,
// or holds no result, is an error: a rerun of nothing would report 100%.
func readRerun(path string) (rerunSet, error) {
	set := rerunSet{keys: map[string]bool{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return set, fmt.Errorf("-rerun: %w", err)
	}
	var rep mutationReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return set, fmt.Errorf("-rerun: %s is not a mutation.json: %w", path, err)
	}
	if len(rep.Results) == 0 {
		return set, fmt.Errorf("-rerun: %s holds no result", path)
	}
	for _, r := range rep.Results {
		if r.Caught || (r.Equivalent != "" && r.Error == "") {
			continue
		}
		set.keys[r.Key] = true
		if !slices.Contains(set.pkgs, r.Package) {
			set.pkgs = append(set.pkgs, r.Package)
		}
	}
	slices.Sort(set.pkgs)
	return set, nil
}

// guardRerunOut refuses an output directory that holds the earlier report:
// the run would overwrite its own input and the earlier mutants' outputs.
func guardRerunOut(report, outDir string) error {
	abs, err := filepath.Abs(report)
	if err != nil {
		return fmt.Errorf("-rerun: %w", err)
	}
	out, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	if filepath.Dir(abs) == out {
		return fmt.Errorf("-rerun: %s is in the output directory %s, which this run would overwrite: give another -out", report, outDir)
	}
	return nil
}

// keepRerun keeps the mutants of ms whose key is in set, and removes each
// kept key from missing, so that what is left there was not generated.
func keepRerun(ms []mechanical.Mutant, set rerunSet, missing map[string]bool) []mechanical.Mutant {
	return slices.DeleteFunc(ms, func(m mechanical.Mutant) bool {
		if !set.keys[m.Key] {
			return true
		}
		delete(missing, m.Key)
		return false
	})
}

// rerunTargets narrows targets to the report's packages when -targets was
// not given.
func rerunTargets(set rerunSet) string { return strings.Join(set.pkgs, ",") }

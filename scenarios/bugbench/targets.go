package bugbench

import (
	"fmt"
	"slices"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// benchmarked maps each mutant the benchmark measures to the workload
// whose checker catches it on both runtimes.
var benchmarked = map[string]*Workload{
	"ms-publish-unconditionally":                MembershipFence,
	"ms-community-inval-spares-loading":         MembershipFence,
	"ms-fence-accepts-any-loading-entry":        MembershipFence,
	"ms-no-recheck-after-lock":                  MembershipCold,
	"dr-drain-mutex-released-early":             CollectorDrain,
	"tw1-shorten-without-rearm":                 CopDeadlines,
	"dr-putback-prepends":                       CollectorDrain,
	"oc-no-age-check":                           OpenMaxAge,
	"oc-slow-read-joined-late":                  OpenMaxAge,
	"oc-age-from-fill-completion":               OpenMaxAge,
	"oc-open-set-per-reader":                    OpenShared,
	"oc-never-cache-open-set":                   OpenShared,
	"oc-membership-invalidation-drops-open-set": OpenShared,
	"oc-abandoned-read-fails-its-joiners":       OpenAbandoned,
	"oc-no-second-attempt-after-abandoned-read": OpenAbandoned,
	"ms-error-cached-as-empty":                  MembershipCancel,
	"ms-lock-kept-on-cancel":                    MembershipCancel,
	"ms-no-expiry":                              MembershipExpiry,
	"ms-expiry-from-load-completion":            MembershipExpiry,
}

// Workloads are the benchmark's workloads, each once, in the order of
// their first mutant in the catalogue.
func Workloads() []*Workload {
	var ws []*Workload
	for _, t := range Targets() {
		if t.Workload != nil && !slices.Contains(ws, t.Workload) {
			ws = append(ws, t.Workload)
		}
	}
	return ws
}

// Targets lists the catalogue's logic mutants (not Race, not tolerance, not
// lock mutants), in catalogue order: each benchmarked one with its
// workload, every other with the reason it is not.
func Targets() []Target {
	var ts []Target
	for _, m := range mutants.All() {
		if m.Race {
			continue
		}
		if w, ok := benchmarked[m.ID]; ok {
			ts = append(ts, Target{Mutant: m.ID, Workload: w})
			continue
		}
		ts = append(ts, Target{Mutant: m.ID, Reason: fmt.Sprintf("no workload on real goroutines yet: its checks (%s %s) fly a simulated world (simdb, simbus or virtual time)", m.Pkg, m.Tests)})
	}
	return ts
}

// Lookup is the target of one mutant ID.
func Lookup(id string) (Target, bool) {
	ts := Targets()
	i := slices.IndexFunc(ts, func(t Target) bool { return t.Mutant == id })
	if i < 0 {
		return Target{}, false
	}
	return ts[i], true
}

// Package claims is how scenario tests report, claim by claim, what they
// measured: a verdict, the measured figure against its bound, the number of
// seeds, the witness behind the figure, and a distribution for the report.
//
// A scenario test aggregates over its seeds and calls Report once per claim
// it serves. Records go to the test log and, when the audit runs the tests
// with -wt.claims=FILE, to that file as JSON lines; the audit merges the
// records of every test per claim ID. A claim served by several tests (OC-2
// for each revocation kind) is violated if any of them is.
package claims

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Verdicts, as the audit prints them.
const (
	Holds          = "holds"           // the check ran and the claim held on every seed
	KnownDeviation = "known-deviation" // the claim does not hold, as its authors documented; the check reproduced it
	Violated       = "violated"        // the check found the claim broken (or failed to reproduce a documented deviation)
	NotChecked     = "not-checked"     // no check serves the claim: always a failure of the audit
)

// Bucket is one bar of a distribution: Count values up to Upper (Label).
type Bucket struct {
	Label string `json:"label"`
	Count int64  `json:"count"`
}

// Record is one test's finding for one claim.
type Record struct {
	ID       string   `json:"id"`
	Test     string   `json:"test"`
	Verdict  string   `json:"verdict"`
	Measured string   `json:"measured"`
	Bound    string   `json:"bound"`
	Value    float64  `json:"value"` // the measured figure in Unit, for merging records (the audit keeps the worst)
	Unit     string   `json:"unit,omitempty"`
	Seeds    int      `json:"seeds"`
	Witness  string   `json:"witness,omitempty"`  // the read, history or counterexample behind the figure
	Artifact string   `json:"artifact,omitempty"` // a file the report links, e.g. a porcupine visualization
	Buckets  []Bucket `json:"buckets,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Proof marks a bounded-exhaustive result (every schedule of a small
	// configuration within a preemption bound) rather than a sampled one.
	// The audit lists proofs on their own lines instead of merging them
	// into the claim's sampled verdict.
	Proof *Proof `json:"proof,omitempty"`
}

// Proof describes the space a bounded-exhaustive check covered.
type Proof struct {
	Config         string `json:"config"`          // the small configuration, in words
	MaxPreemptions int    `json:"max_preemptions"` // P
	Reduction      string `json:"reduction"`
	Explored       int64  `json:"explored"` // schedules run to their end
	Pruned         int64  `json:"pruned"`   // branches the reduction skipped
	Exhausted      bool   `json:"exhausted"`
}

var (
	flagFile = flag.String("wt.claims", "", "append one JSON line per claim record to this file (the audit sets it)")
)

// Report logs r and appends it to the -wt.claims file. It fails t on a
// malformed record (unknown verdict, no ID) rather than writing it.
func Report(t testing.TB, r Record) {
	t.Helper()
	if r.ID == "" || !validVerdict(r.Verdict) {
		t.Errorf("claims: malformed record %+v", r)
		return
	}
	if r.Test == "" {
		r.Test = t.Name()
	}
	t.Logf("claim %s: %s: measured %s (bound %s) over %d seeds%s", r.ID, r.Verdict, r.Measured, r.Bound, r.Seeds, witnessSuffix(r.Witness))
	if *flagFile == "" {
		return
	}
	line, err := json.Marshal(r)
	if err != nil {
		t.Errorf("claims: %v", err)
		return
	}
	// One write of one line to a file opened with O_APPEND: records of
	// concurrently running test binaries never interleave.
	f, err := os.OpenFile(*flagFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("claims: -wt.claims: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Errorf("claims: -wt.claims: %v", err)
	}
}

func witnessSuffix(w string) string {
	if w == "" {
		return ""
	}
	first, _, _ := strings.Cut(w, "\n")
	return "; witness: " + first
}

func validVerdict(v string) bool {
	switch v {
	case Holds, KnownDeviation, Violated, NotChecked:
		return true
	}
	return false
}

// Read parses a -wt.claims file.
func Read(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Verdict returns Holds when ok, otherwise Violated: the common case of a
// check that either held on every seed or did not.
func Verdict(ok bool) string {
	if ok {
		return Holds
	}
	return Violated
}

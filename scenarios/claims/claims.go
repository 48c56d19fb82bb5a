// Package claims is where the claims of CLAIMS.md meet their checks: the
// claims themselves (the embedded CLAIMS.md), the seeds' numbers every check
// takes its bound from (Table), the declaration a claim check is written as
// (Check), and the record each check files for the audit (Record).
//
// A claim check declares its claim, its seeds, the world it flies and what
// it measures; Run flies the seeds through the harness (sim/simtest), keeps
// one sample per seed, merges them, compares the worst figure with the
// claim's bound from the table, checks the probes the seeds had to reach,
// and reports one record:
//
//	func TestOC2_LostInvalidationAgeBound(t *testing.T) {
//		claims.Run(t, claims.Check[pods.Staleness]{
//			Claim: "OC-2", Bound: "open set max age", Seeds: 20,
//			Fly: func(s *sim.Sim, b claims.Bound) (pods.Staleness, error) { ... },
//			Sample: func(r pods.Staleness) claims.Sample { return r.Sample },
//			Measured: func(o claims.Outcome) string { ... },
//		})
//	}
//
// Records go to the test log and, when the audit runs the tests with
// WINDTUNNEL_CLAIMS=FILE (or -wt.claims=FILE), to that file as JSON lines;
// the audit merges the records of every test per claim ID. A claim served
// by several tests (OC-2 for each revocation kind) is violated if any of
// them is.
package claims

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	// Inconclusive: nothing was found broken, but a run of fewer seeds than
	// the check's default did not exercise it as much as its requirements
	// ask (a probe reached too rarely, a tight bound not approached); its
	// default seeds judge it. Always a failure of the audit.
	Inconclusive = "inconclusive"
)

// Bucket is one bar of a distribution: Count values with Label.
type Bucket struct {
	Label string `json:"label"`
	Count int64  `json:"count"`
}

// Record is one test's finding for one claim.
type Record struct {
	ID       string `json:"id"`
	Test     string `json:"test"`
	Verdict  string `json:"verdict"`
	Measured string `json:"measured"` // computed from what was measured, never written in advance
	Bound    string `json:"bound"`    // the bound in words, from the table
	// BoundName names the table entry the figure is compared with.
	BoundName string `json:"bound_name,omitempty"`
	// BoundValue is the table's number in Unit (0 when the claim has none).
	BoundValue float64 `json:"bound_value,omitempty"`
	// BoundKind is how the figure meets the bound: "at-most", "at-least"
	// or "exactly" (the worst of several records is the largest figure,
	// or the smallest for "at-least").
	BoundKind string  `json:"bound_kind,omitempty"`
	Value     float64 `json:"value"` // the worst measured figure in Unit, for merging records (the audit keeps the worst)
	Unit      string  `json:"unit,omitempty"`
	// Tightness is worst / bound for a bound the design may reach (nil
	// otherwise): how close the check drove the design to its limit.
	Tightness *float64 `json:"tightness,omitempty"`
	// Tight says the bound requires tightness ≥ MinTightness; Sampled that
	// this record's check samples at random and leaves that to another.
	Tight    bool   `json:"tight,omitempty"`
	Sampled  bool   `json:"sampled,omitempty"`
	Seeds    int    `json:"seeds"`
	Witness  string `json:"witness,omitempty"`  // the read, history or counterexample behind the figure
	Artifact string `json:"artifact,omitempty"` // a file the report links, e.g. a porcupine visualization
	// Timeline and Table are the pages of the seed a check explained
	// (Check.Explain): a documented deviation's counterexample.
	Timeline string   `json:"timeline,omitempty"`
	Table    string   `json:"table,omitempty"`
	Buckets  []Bucket `json:"buckets,omitempty"`
	// Hist is the distribution of every observation on a linear axis up to
	// 1.2 × the bound, for window claims.
	Hist  *Hist  `json:"hist,omitempty"`
	Note  string `json:"note,omitempty"`
	Proof *Proof `json:"proof,omitempty"`
	// Probes are the rare interleavings this check's seeds had to reach.
	Probes []ProbeCount `json:"probes,omitempty"`
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

// ProbeCount is a probe a check required, and how often its seeds reached it.
type ProbeCount struct {
	Name  string `json:"name"`
	Claim string `json:"claim"`
	What  string `json:"what"`
	Min   int64  `json:"min"`
	Seeds int    `json:"seeds"` // seeds that reached it at least once
	Count int64  `json:"count"` // times reached, over every seed
}

var flagFile = flag.String("wt.claims", "", "append one JSON line per claim record to this file (the audit sets WINDTUNNEL_CLAIMS instead)")

// File is where records go: -wt.claims, else $WINDTUNNEL_CLAIMS ("" for
// none).
func File() string {
	if *flagFile != "" {
		return *flagFile
	}
	return os.Getenv("WINDTUNNEL_CLAIMS")
}

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

// Report logs r and appends it to the claims file. It fails t on a
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
	path := File()
	if path == "" {
		return
	}
	line, err := json.Marshal(r)
	if err != nil {
		t.Errorf("claims: %v", err)
		return
	}
	// One write of one line to a file opened with O_APPEND: records of
	// concurrently running test binaries never interleave.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("claims: %s: %v", path, err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Errorf("claims: %s: %v", path, err)
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
	case Holds, KnownDeviation, Violated, NotChecked, Inconclusive:
		return true
	}
	return false
}

// maxRecordBytes bounds one line of a claims file.
const maxRecordBytes = 16 << 20

// Read parses a claims file: one JSON record per line, strictly (unknown
// fields are an error).
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadFrom(f, path)
}

// ReadFrom parses claim records from r; name is used in errors.
func ReadFrom(r io.Reader, name string) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecordBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: trailing data after the record", name, n)
		}
		if rec.ID == "" || !validVerdict(rec.Verdict) {
			return nil, fmt.Errorf("%s:%d: a record needs an ID and a known verdict", name, n)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
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

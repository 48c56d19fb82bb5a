package findings

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

// Records go to the test log and, when the audit runs the tests with
// WINDTUNNEL_CLAIMS=FILE (or -wt.claims=FILE), to that file as JSON lines.

var flagFile = flag.String("wt.claims", "", "append one JSON line per claim record to this file (the audit sets WINDTUNNEL_CLAIMS instead)")

// File is where records go: -wt.claims, else $WINDTUNNEL_CLAIMS ("" for
// none).
func File() string {
	if *flagFile != "" {
		return *flagFile
	}
	return os.Getenv("WINDTUNNEL_CLAIMS")
}

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

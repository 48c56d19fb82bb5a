package findings

import (
	"strings"
	"testing"
)

// FuzzRecords: the claims-file reader never panics, and accepts only
// records with an ID and a known verdict.
func FuzzRecords(f *testing.F) {
	f.Add(`{"id":"OC-2","verdict":"holds","value":0.9}`)
	f.Add(`{"id":"OC-2","verdict":"holds","bogus":1}`)
	f.Add(`{"id":"OC-2","verdict":"holds"} {}`)
	f.Add(`{"verdict":"holds"}`)
	f.Add("{")
	f.Fuzz(func(t *testing.T, text string) {
		recs, err := ReadFrom(strings.NewReader(text), "f.jsonl")
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.ID == "" || !validVerdict(r.Verdict) {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

package claims

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// The claims come from CLAIMS.md, embedded here from the project's shared
// description (../shared/CLAIMS.md; TestEmbeddedClaimsMatchTheShared says
// when the copies differ) so the audit is self-contained: every ID in it
// must receive a verdict, or the audit fails with "not-checked".
//
//go:embed CLAIMS.md
var claimsMarkdown string

// Claim is one row of CLAIMS.md.
type Claim struct {
	ID      string // OC-2
	Family  string // OC
	Text    string // the claim
	Check   string // how a check confirms it
	Mutants string // the mutants it must catch, as CLAIMS.md words them ("—" for none)
}

var rowID = regexp.MustCompile(`^\| ([A-Z]{2}-\d+) \|`)

// Claims parses the embedded CLAIMS.md into its rows, in document order.
func Claims() ([]Claim, error) { return parseClaims(claimsMarkdown) }

// Markdown is the embedded CLAIMS.md.
func Markdown() string { return claimsMarkdown }

func parseClaims(md string) ([]Claim, error) {
	var out []Claim
	seen := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !rowID.MatchString(line) {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 {
			return nil, fmt.Errorf("claims: CLAIMS.md row %q has %d cells, want 4", line, len(cells))
		}
		id := strings.TrimSpace(cells[0])
		if seen[id] {
			return nil, fmt.Errorf("claims: CLAIMS.md lists %s twice", id)
		}
		seen[id] = true
		family, _, _ := strings.Cut(id, "-")
		out = append(out, Claim{ID: id, Family: family, Text: strings.TrimSpace(cells[1]),
			Check: strings.TrimSpace(cells[2]), Mutants: strings.TrimSpace(cells[3])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("claims: CLAIMS.md has no claim rows")
	}
	return out, nil
}

// knownClaim refuses a claim ID that CLAIMS.md does not have: its record
// would be filed under a claim the audit never reads, and the check would
// seem to serve a claim nobody made.
func knownClaim(id string) error {
	cs, err := Claims()
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.ID == id {
			return nil
		}
		ids = append(ids, c.ID)
	}
	if id == "" {
		return fmt.Errorf("the check names no claim (known: %s)", strings.Join(ids, ", "))
	}
	return fmt.Errorf("claim %s is not in CLAIMS.md (known: %s)", id, strings.Join(ids, ", "))
}

package audit

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// TimedTests are the claim checks, by family package, that read the real
// clock and judge what they read:
//
//   - DR-8's lock waits and TW-9's pass times. Both are ratios against a
//     baseline in the same run.
//   - TW-6's cost of an operation on a small and a large wheel.
//   - TW-8's pass times against the ones measured from outside.
//
// A second process on the same cores would be measured with them. So they
// run before every other check and mutant of the audit, one process at a
// time. TestTimedTestsAreTheOnesThatReadTheClock keeps the list equal to
// the tests that reach a //windtunnel:realtime clock read, both ways.
var TimedTests = map[string][]string{
	"./scenarios/dr": {"TestDR8_FlushLockWait"},
	"./scenarios/tw": {"TestTW6_ConstantCost", "TestTW8_RealPassTimes", "TestTW9_IdlePassSpeed"},
}

// untimedParts returns the indexes of parts' untimed processes, in the
// packages' order.
func untimedParts(parts []claimPart) []int {
	var order []int
	for i, p := range parts {
		if !p.timed {
			order = append(order, i)
		}
	}
	return order
}

// claimPart is one go test process of the claim phase: one package's
// untimed checks, or its timed ones.
type claimPart struct {
	pkg       string
	run, skip string // -run and -skip
	timed     bool

	recFile, statsFile string // this process's claim records and stats
	output             []byte
	failed             []string // as RunClaims reports them
	err                error
}

func (p *claimPart) files(dir string, i int) {
	dir, _ = filepath.Abs(dir)
	p.recFile = filepath.Join(dir, fmt.Sprintf("%02d-claims.jsonl", i))
	p.statsFile = filepath.Join(dir, fmt.Sprintf("%02d-stats.jsonl", i))
}

// flags are the test binary's flags that select the part's checks.
func (p *claimPart) flags() []string {
	a := []string{"-test.run=" + p.run}
	if p.skip != "" {
		a = append(a, "-test.skip="+p.skip)
	}
	return a
}

// claimParts splits the claim phase of pkgs under the -run pattern into its
// processes, in the order their results are joined: each package's untimed
// checks, then its timed ones (by package, in timed) that pattern selects,
// if any.
func claimParts(pkgs []string, pattern string, timedTests map[string][]string) ([]claimPart, error) {
	top, rest := splitTestPattern(pattern)
	re, err := regexp.Compile(top)
	if err != nil {
		return nil, fmt.Errorf("-run %q: %v", pattern, err)
	}
	var parts []claimPart
	for _, pkg := range pkgs {
		all := timedTests[pkg]
		part := claimPart{pkg: pkg, run: pattern}
		if len(all) > 0 {
			part.skip = anyOf(all)
		}
		parts = append(parts, part)
		var timed []string
		for _, name := range all {
			if re.MatchString(name) {
				timed = append(timed, name)
			}
		}
		if len(timed) > 0 {
			parts = append(parts, claimPart{pkg: pkg, run: anyOf(timed) + rest, timed: true})
		}
	}
	return parts, nil
}

// anyOf is the top-level -run pattern matching exactly the names.
func anyOf(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// splitTestPattern splits a -run pattern into its top-level element and the
// rest ("/..." or ""), the way go test splits it: at the first slash outside
// brackets and parentheses.
func splitTestPattern(pattern string) (top, rest string) {
	brackets, parens := 0, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++ // an escaped character, whatever it is
		case c == '[':
			brackets++
		case c == ']' && brackets > 0:
			brackets--
		case c == '(' && brackets == 0:
			parens++
		case c == ')' && brackets == 0 && parens > 0:
			parens--
		case c == '/' && brackets == 0 && parens == 0:
			return pattern[:i], pattern[i:]
		}
	}
	return pattern, ""
}

package mechanical

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// equivalentList is the reviewed list of survivors that no run can tell
// from the original: one per line, the mutant's key, then the argument.
//
//go:embed equivalent.txt
var equivalentList string

// maxArgument bounds an argument: one line a reviewer reads.
const maxArgument = 300

// ownChoicePrefix starts the argument of a survivor that changes only a
// choice impl made for itself, which no claim or source text names: an
// input bound's figure, an output order a consumer does not rely on. The
// checks measure such a choice rather than assume it, so no claim check
// can tell the mutant; it is argued, reviewed and counted apart from the
// equivalent mutants, which no run at all can tell.
const ownChoicePrefix = "own choice:"

// IsOwnChoice reports whether an argument of the reviewed list is one of
// impl's own choices rather than an equivalence.
func IsOwnChoice(argument string) bool { return strings.HasPrefix(argument, ownChoicePrefix) }

// Equivalents reads the reviewed list: key -> argument.
func Equivalents() (map[string]string, error) {
	return parseEquivalents(equivalentList)
}

func parseEquivalents(text string) (map[string]string, error) {
	out := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		switch {
		case len(key) != 12 || strings.Trim(key, "0123456789abcdef") != "":
			return nil, fmt.Errorf("equivalent.txt:%d: %q is not a mutant key (12 hex digits)", n+1, key)
		case arg == "" || len(arg) > maxArgument:
			return nil, fmt.Errorf("equivalent.txt:%d: mutant %s needs a one-line argument of at most %d characters", n+1, key, maxArgument)
		case out[key] != "":
			return nil, fmt.Errorf("equivalent.txt:%d: mutant %s listed twice", n+1, key)
		}
		out[key] = arg
	}
	return out, nil
}

// Find generates the target a mechanical mutant's ID names and returns
// that variant, so that a printed make replay MUTANT=ID can apply it.
func Find(root, id string) (Mutant, bool, error) {
	for _, t := range Targets {
		if !strings.Contains(id, "-"+lastElem(t.Dir)+"-") {
			continue
		}
		g, err := Generate(root, t)
		if err != nil {
			return Mutant{}, false, err
		}
		for _, m := range g.Mutants {
			for _, v := range m.Variants {
				if v.ID == id {
					m.Variants = []mutants.Mutant{v}
					return m, true, nil
				}
			}
		}
	}
	return Mutant{}, false, nil
}

func lastElem(dir string) string { return dir[strings.LastIndexByte(dir, '/')+1:] }

// Package mechanical generates mutants of impl/'s claimed packages from
// operators over the syntax tree (comparisons, booleans, arithmetic,
// slices, deleted statements, swapped branches, removed early returns,
// constants), keeps those that type-check, and names the claim family
// whose checks must catch each. Nobody chose these changes: they test the
// checks against mistakes the catalogue's authors did not think of.
package mechanical

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// KindMechanical is the kind of a generated mutant in the audit's results.
const KindMechanical = "mechanical"

// Target is a claimed package of impl/ and the families whose checks
// cover it: a mutant of it counts as caught when one of them catches it.
type Target struct {
	Dir      string   // relative to the module root
	Families []string // the claim families' test packages
}

// Targets are impl/'s claimed packages: the code the claims are about,
// and the shared pieces the families fly with it.
var Targets = []Target{
	{"impl/accesschannels", []string{"./scenarios/oc"}},
	{"impl/membership", []string{"./scenarios/ms"}},
	{"impl/collector", []string{"./scenarios/dr"}},
	{"impl/timerwheel", []string{"./scenarios/tw"}},
	{"impl/inactivitycop", []string{"./scenarios/tw"}},
	{"impl/logfilter", []string{"./scenarios/lf"}},
	{"impl/relay", []string{"./scenarios/oc", "./scenarios/ms"}},
	{"impl/wcache", []string{"./scenarios/ms", "./scenarios/oc"}},
	{"impl/stats", []string{"./scenarios/oc", "./scenarios/ms", "./scenarios/dr"}},
}

// Mutant is one generated change, ready for the audit's machinery for each
// family that must catch it.
type Mutant struct {
	Key      string // stable across runs of one commit: a hash of the file, old and new
	Target   Target
	Op       string
	Line     int
	Col      int              // the change's first byte, 1-based, as go/token counts columns
	Variants []mutants.Mutant // one per family, all the same change
}

// Generated is what Generate made of one package.
type Generated struct {
	Mutants []Mutant
	// Uncompiled counts the mutations that did not type-check, by
	// operator: they are not mutants (the compiler catches them).
	Uncompiled map[string]int
}

// maxSnippetLines bounds the search for an Old snippet that occurs once.
const maxSnippetLines = 40

// Generate makes every mechanical mutant of the target under root that
// type-checks, in file and position order.
func Generate(root string, t Target) (Generated, error) {
	g := Generated{Uncompiled: map[string]int{}}
	chk, err := newChecker(root, t.Dir)
	if err != nil {
		return g, err
	}
	for i, name := range chk.names {
		src := chk.srcs[i]
		tf := chk.fset.File(chk.files[i].Pos())
		off := func(p token.Pos) int { return tf.Offset(p) }
		es := edits(chk.files[i], src, off)
		sort.SliceStable(es, func(a, b int) bool { return es[a].from < es[b].from })
		rel := filepath.ToSlash(filepath.Join(t.Dir, filepath.Base(name)))
		for n, e := range es {
			mutated := make([]byte, 0, len(src)+len(e.text))
			mutated = append(append(append(mutated, src[:e.from]...), e.text...), src[e.to:]...)
			if err := chk.check(i, mutated); err != nil {
				g.Uncompiled[e.op]++
				continue
			}
			old, new, ok := snippet(src, e)
			if !ok {
				g.Uncompiled[e.op]++ // no unique snippet: cannot be applied as a mutant
				continue
			}
			at := tf.Position(tf.Pos(e.from))
			line := at.Line
			sum := sha256.Sum256([]byte(rel + "\x00" + old + "\x00" + new))
			m := Mutant{Key: hex.EncodeToString(sum[:6]), Target: t, Op: e.op, Line: line, Col: at.Column}
			for _, fam := range t.Families {
				m.Variants = append(m.Variants, mutants.Mutant{
					// The file's name keeps two files' edits at one line and
					// index apart: a shared ID would share an overlay and a
					// verdict.
					ID: fmt.Sprintf("mech-%s-%s-%s-%s-%d-%d", strings.TrimPrefix(fam, "./scenarios/"), filepath.Base(t.Dir),
						strings.TrimSuffix(filepath.Base(name), ".go"), e.op, line, n),
					What:  fmt.Sprintf("%s:%d %s", rel, line, e.what),
					File:  rel,
					Old:   old,
					New:   new,
					Tests: "^Test",
					Pkg:   fam,
					Kind:  KindMechanical,
				})
			}
			g.Mutants = append(g.Mutants, m)
		}
	}
	return g, nil
}

// snippet is the shortest run of whole lines around the edit that occurs
// once in src, before and after the edit.
func snippet(src []byte, e edit) (old, new string, ok bool) {
	from := bytes.LastIndexByte(src[:e.from], '\n') + 1
	to := e.to + bytes.IndexByte(src[e.to:], '\n')
	if to < e.to {
		to = len(src)
	}
	for range maxSnippetLines {
		old = string(src[from:to])
		if strings.Count(string(src), old) == 1 {
			new = string(src[from:e.from]) + e.text + string(src[e.to:to])
			return old, new, old != new
		}
		if from > 0 {
			from = bytes.LastIndexByte(src[:from-1], '\n') + 1
		}
		if to < len(src) {
			if next := bytes.IndexByte(src[to+1:], '\n'); next >= 0 {
				to += 1 + next
			} else {
				to = len(src)
			}
		}
	}
	return "", "", false
}

// checker type-checks a package with one file replaced, against the
// dependencies go/packages loaded once.
type checker struct {
	fset  *token.FileSet
	path  string
	names []string
	srcs  [][]byte
	files []*ast.File
	imp   types.Importer
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func newChecker(root, dir string) (*checker, error) {
	cfg := &packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedTypes}
	pkgs, err := packages.Load(cfg, "./"+dir)
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		return nil, fmt.Errorf("loading %s: %v", dir, pkgs[0].Errors)
	}
	p := pkgs[0]
	c := &checker{fset: token.NewFileSet(), path: p.PkgPath, names: p.GoFiles}
	c.imp = importerFunc(func(path string) (*types.Package, error) {
		if dep := p.Imports[path]; dep != nil && dep.Types != nil {
			return dep.Types, nil
		}
		return nil, fmt.Errorf("%s does not import %s", dir, path)
	})
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(c.fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		c.files, c.srcs = append(c.files, f), append(c.srcs, src)
	}
	if err := c.check(-1, nil); err != nil {
		return nil, fmt.Errorf("%s does not type-check unmutated: %v", dir, err)
	}
	return c, nil
}

// check type-checks the package with file i's source replaced by src (i <
// 0: as it is).
func (c *checker) check(i int, src []byte) error {
	files := c.files
	if i >= 0 {
		f, err := parser.ParseFile(c.fset, c.names[i], src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(append(append([]*ast.File{}, c.files[:i]...), f), c.files[i+1:]...)
	}
	conf := types.Config{Importer: c.imp}
	_, err := conf.Check(c.path, c.fset, files, nil)
	return err
}

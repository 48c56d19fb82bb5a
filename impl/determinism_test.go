// This test enforces the determinism contract (DESIGN.md) on the source of
// everything a simulated task runs: impl/ (outside impl/rt and impl/edge,
// which are the real world's side of the seam) and the simulated world in
// sim/simdb, sim/simbus and scenarios/ (outside scenarios/audit and
// scenarios/cmd, which run go test as processes and time them).
package impl_test

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

const module = "github.com/windtunnel/windtunnel"

// violation is one broken rule at one source position.
type violation struct {
	Rule string
	Pos  string
	Text string
}

func (v violation) String() string { return fmt.Sprintf("%s: %s: %s", v.Pos, v.Rule, v.Text) }

var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true,
	"NewTicker": true, "Tick": true, "Since": true, "Until": true,
}

// Constructors of explicit random sources are fine (the world's source is a
// *rand.Rand from sim.Sim.Rand); package-level functions use the global one.
var randConstructors = map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewSource": true, "NewZipf": true}

// scan loads the packages matching patterns (non-test files only) and
// reports every violation. implRules adds the rules for production code:
// no math/rand at all, and imports limited to the standard library and impl.
func scan(t *testing.T, dir string, implRules bool, patterns ...string) []violation {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports, Dir: dir}
	pkgs, err := packages.Load(cfg, patterns...)
	require.NoError(t, err)
	var out []violation
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("loading %s: %v", p.PkgPath, e)
		}
		if excluded(p.PkgPath) {
			continue
		}
		for _, f := range p.Syntax {
			out = append(out, scanFile(p, f, implRules)...)
		}
	}
	return out
}

func excluded(path string) bool {
	for _, prefix := range []string{module + "/impl/rt", module + "/impl/edge", module + "/scenarios/audit", module + "/scenarios/cmd"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

func scanFile(p *packages.Package, f *ast.File, implRules bool) []violation {
	var out []violation
	fset := p.Fset
	add := func(rule string, n ast.Node, text string) {
		out = append(out, violation{rule, fset.Position(n.Pos()).String(), text})
	}
	annotated := map[int]bool{} // lines carrying or followed by //windtunnel:unordered
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//windtunnel:unordered") {
				line := fset.Position(c.Pos()).Line
				annotated[line], annotated[line+1] = true, true
			}
		}
	}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		switch {
		case path == "sync":
			add("sync", imp, "sync locks block real threads; use rt.Mutex, rt.RWMutex, rt.Event, rt.WaitGroup")
		case implRules && (path == "math/rand" || path == "math/rand/v2"):
			add("global rand", imp, "production code draws no random numbers")
		case implRules && !allowedImplImport(path):
			add("import", imp, fmt.Sprintf("impl imports only the standard library and impl packages, not %q", path))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add("go statement", n, "start tasks with rt.Runtime.Go")
		case *ast.SelectorExpr:
			obj := p.TypesInfo.Uses[n.Sel]
			if obj == nil || obj.Pkg() == nil {
				break
			}
			if _, isFunc := obj.(*types.Func); !isFunc {
				break
			}
			if sig, ok := obj.Type().(*types.Signature); ok && sig.Recv() != nil {
				break // a method, such as (time.Time).Add
			}
			switch obj.Pkg().Path() {
			case "time":
				if forbiddenTime[obj.Name()] {
					add("time", n, "time."+obj.Name()+" reads or waits on the wall clock; use rt.Runtime")
				}
			case "math/rand", "math/rand/v2":
				if !randConstructors[obj.Name()] {
					add("global rand", n, "rand."+obj.Name()+" uses the global source; draw from the run's *rand.Rand")
				}
			}
		case *ast.ChanType:
			add("channel", n, "channels between tasks block the scheduler; use rt primitives")
		case *ast.SendStmt:
			add("channel", n, "channel send")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				add("channel", n, "channel receive")
			}
		case *ast.SelectStmt:
			add("select", n, "select blocks the scheduler; use rt primitives with a context")
		case *ast.RangeStmt:
			if tv, ok := p.TypesInfo.Types[n.X]; ok {
				if _, isMap := tv.Type.Underlying().(*types.Map); isMap && !annotated[fset.Position(n.Pos()).Line] {
					add("map range", n, "map iteration order is random; iterate sorted keys, or mark an order-independent loop //windtunnel:unordered <why>")
				}
			}
		}
		return true
	})
	return out
}

func allowedImplImport(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		return true // standard library
	}
	return path == module+"/impl" || strings.HasPrefix(path, module+"/impl/") && !strings.HasPrefix(path, module+"/impl/edge")
}

// TestDeterminismContract fails on any violation in the real code.
func TestDeterminismContract(t *testing.T) {
	var all []violation
	all = append(all, scan(t, "..", true, "./impl/...")...)
	var world []string
	for _, dir := range []string{"sim/simdb", "sim/simbus", "scenarios"} {
		if _, err := os.Stat(filepath.Join("..", dir)); err == nil {
			world = append(world, "./"+dir+"/...")
		}
	}
	if len(world) > 0 {
		all = append(all, scan(t, "..", false, world...)...)
	}
	for _, v := range all {
		t.Errorf("%v", v)
	}
}

// TestScanReportsEveryRule: the scan must be able to fail.
func TestScanReportsEveryRule(t *testing.T) {
	vs := scan(t, ".", true, "./testdata/violations")
	var rules []string
	for _, v := range vs {
		rules = append(rules, v.Rule)
	}
	slices.Sort(rules)
	assert.Equal(t, []string{
		"channel", "channel", "channel", // the chan type in make, the send, the receive
		"global rand", "global rand",
		"go statement",
		"map range",
		"select",
		"sync",
		"time", "time",
	}, rules, "violations: %v", vs)
}

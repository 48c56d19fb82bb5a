// Package determinism is the source scan that enforces windtunnel's
// determinism contract on code a simulated task runs. Such code has no go
// statements, no wall clock (time.Now, Sleep, After, timers), no sync locks
// and no sync/atomic (synchronisation the scheduler cannot see). It has no
// Go channels or select between tasks (the seam's rt.Chan and rt.Select are
// allowed), no global math/rand, and no map
// iteration whose order matters (ranging over a map, or over maps.Keys,
// maps.Values or maps.All). Production code (Rules.Impl) must also import
// only the standard library and its own module's impl packages, and draw no
// random numbers at all.
//
// Use it on your own packages from a test:
//
//	func TestDeterminism(t *testing.T) {
//		determinism.Check(t, determinism.Rules{}, "./mypkg/...")
//	}
//
// or as a vet tool: go build -o wtvet ./sim/determinism/cmd/wtvet && go vet
// -vettool=$PWD/wtvet ./mypkg/... (the analyzer applies Rules{}).
//
// Once per file, //windtunnel:allow sync/atomic <why> admits a package whose
// atomics synchronise nothing a task waits on (impl/stats' counters). The
// other annotations go on the offending line or the line above it:
//
//	//windtunnel:unordered <why>   a map iteration whose order cannot matter
//	//windtunnel:realtime <why>    a wall-clock read in a benchmark-style test
//	                               that runs outside every simulated task
package determinism

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Rules selects the rule set.
type Rules struct {
	// Impl adds the production-code rules: no math/rand at all, and
	// imports limited to the standard library and Module/impl/... (but
	// Module/impl/edge).
	Impl bool
	// Module is the module path for Impl's import rule.
	Module string
	// Tests scans the packages' _test.go files too.
	Tests bool
	// Exclude lists package paths (and their subpackages) not to scan.
	Exclude []string
}

// Violation is one broken rule at one source position.
type Violation struct {
	Rule string
	Pos  string
	Text string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s: %s", v.Pos, v.Rule, v.Text) }

var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true,
	"NewTicker": true, "Tick": true, "Since": true, "Until": true,
}

// Constructors of explicit random sources are fine (the world's source is a
// *rand.Rand from sim.Sim.Rand); package-level functions use the global one.
var randConstructors = map[string]bool{"New": true, "NewPCG": true, "NewChaCha8": true, "NewSource": true, "NewZipf": true}

// orderedIterators are the iterators over maps whose order is random.
var orderedIterators = map[string]bool{"Keys": true, "Values": true, "All": true}

// Scan loads the packages matching patterns from dir and reports every
// violation, in package and file order.
func Scan(dir string, r Rules, patterns ...string) ([]Violation, error) {
	patterns, err := r.kept(dir, patterns)
	if err != nil || len(patterns) == 0 {
		return nil, err
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports, Dir: dir, Tests: r.Tests}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var out []Violation
	seen := map[string]bool{} // with Tests, a file belongs to two packages
	for _, p := range pkgs {
		for _, e := range p.Errors {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, e)
		}
		if r.excluded(p.PkgPath) {
			continue
		}
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Pos()).Filename
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, ScanFile(p.Fset, p.TypesInfo, f, r)...)
		}
	}
	return out, nil
}

// kept expands patterns to the package paths Exclude leaves, so that the
// excluded packages (and their tests' variants) are neither compiled for
// export data nor type-checked: the audit's are the module's largest.
func (r Rules) kept(dir string, patterns []string) ([]string, error) {
	if len(r.Exclude) == 0 {
		return patterns, nil
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName, Dir: dir}, patterns...)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, e)
		}
		if !r.excluded(p.PkgPath) {
			kept = append(kept, p.PkgPath)
		}
	}
	return kept, nil
}

func (r Rules) excluded(path string) bool {
	path = strings.TrimSuffix(strings.TrimSuffix(path, "_test"), ".test")
	if i := strings.Index(path, " ["); i >= 0 {
		path = path[:i]
	}
	for _, prefix := range r.Exclude {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

// annotations are the lines a directive covers.
type annotations struct {
	unordered, realtime map[int]bool
	allowAtomic         bool
}

func annotationsOf(fset *token.FileSet, f *ast.File) annotations {
	a := annotations{unordered: map[int]bool{}, realtime: map[int]bool{}}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			line := fset.Position(c.Pos()).Line
			switch {
			case strings.HasPrefix(c.Text, "//windtunnel:unordered"):
				a.unordered[line], a.unordered[line+1] = true, true
			case strings.HasPrefix(c.Text, "//windtunnel:realtime"):
				a.realtime[line], a.realtime[line+1] = true, true
			case strings.HasPrefix(c.Text, "//windtunnel:allow sync/atomic"):
				a.allowAtomic = true
			}
		}
	}
	return a
}

// ScanFile checks one parsed, type-checked file.
func ScanFile(fset *token.FileSet, info *types.Info, f *ast.File, r Rules) []Violation {
	fs := scanFile(fset, info, f, r)
	out := make([]Violation, len(fs))
	for i, x := range fs {
		out[i] = x.Violation
	}
	return out
}

// found is a violation with its position in the file set.
type found struct {
	Violation
	pos token.Pos
}

func scanFile(fset *token.FileSet, info *types.Info, f *ast.File, r Rules) []found {
	var out []found
	add := func(rule string, n ast.Node, text string) {
		out = append(out, found{Violation{rule, fset.Position(n.Pos()).String(), text}, n.Pos()})
	}
	ann := annotationsOf(fset, f)
	line := func(n ast.Node) int { return fset.Position(n.Pos()).Line }
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		switch {
		case path == "sync":
			add("sync", imp, "sync locks block real threads; use rt.Mutex, rt.RWMutex, rt.Event, rt.WaitGroup, rt.Cond, rt.Once")
		case path == "sync/atomic" && !ann.allowAtomic:
			add("sync/atomic", imp, "atomics synchronise behind the scheduler's back; share state under an rt lock (or mark a package whose atomics synchronise nothing //windtunnel:allow sync/atomic <why>)")
		case r.Impl && (path == "math/rand" || path == "math/rand/v2"):
			add("global rand", imp, "production code draws no random numbers")
		case r.Impl && !allowedImplImport(r.Module, path):
			add("import", imp, fmt.Sprintf("impl imports only the standard library and impl packages, not %q", path))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add("go statement", n, "start tasks with rt.Runtime.Go")
		case *ast.SelectorExpr:
			obj := info.Uses[n.Sel]
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
				if forbiddenTime[obj.Name()] && !ann.realtime[line(n)] {
					add("time", n, "time."+obj.Name()+" reads or waits on the wall clock; use rt.Runtime (or mark a benchmark-style wall-clock read outside every simulated task //windtunnel:realtime <why>)")
				}
			case "math/rand", "math/rand/v2":
				if !randConstructors[obj.Name()] {
					add("global rand", n, "rand."+obj.Name()+" uses the global source; draw from the run's *rand.Rand")
				}
			}
		case *ast.ChanType:
			add("channel", n, "Go channels between tasks block the scheduler; use the seam's rt.Chan")
		case *ast.SendStmt:
			add("channel", n, "channel send; use rt.Chan.Send")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				add("channel", n, "channel receive; use rt.Chan.Recv")
			}
		case *ast.SelectStmt:
			add("select", n, "select blocks the scheduler; use rt.Select (rt.DoneCase for a context)")
		case *ast.RangeStmt:
			if ann.unordered[line(n)] {
				break
			}
			if tv, ok := info.Types[n.X]; ok {
				if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
					add("map range", n, "map iteration order is random; iterate sorted keys, or mark an order-independent loop //windtunnel:unordered <why>")
					break
				}
			}
			if call, ok := n.X.(*ast.CallExpr); ok && isMapIterator(info, call) {
				add("map range", n, "maps.Keys, maps.Values and maps.All iterate in random order; use slices.Sorted(maps.Keys(m)), or mark an order-independent loop //windtunnel:unordered <why>")
			}
		}
		return true
	})
	return out
}

// isMapIterator reports a call of maps.Keys, maps.Values or maps.All.
func isMapIterator(info *types.Info, call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	obj := info.Uses[sel.Sel]
	return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "maps" && orderedIterators[obj.Name()]
}

func allowedImplImport(module, path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		return true // standard library
	}
	return path == module+"/impl" || strings.HasPrefix(path, module+"/impl/") && !strings.HasPrefix(path, module+"/impl/edge")
}

// TB is the part of testing.TB Check uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Check scans patterns (relative to the working directory) and fails t
// once per violation.
func Check(t TB, r Rules, patterns ...string) {
	t.Helper()
	vs, err := Scan(".", r, patterns...)
	if err != nil {
		t.Fatalf("determinism: %v", err)
		return
	}
	for _, v := range vs {
		t.Errorf("%v", v)
	}
}

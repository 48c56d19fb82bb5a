package translate

import (
	"go/ast"
	"go/types"
)

// rewrites maps a package member to its rtgo (or rt) replacement. A member
// of a package listed here but not in its map is kept as it is when keep
// says so, and reported otherwise.
var rewrites = map[string]map[string]string{
	"sync": {
		"Mutex": "rtgo.Mutex", "RWMutex": "rtgo.RWMutex", "WaitGroup": "rtgo.WaitGroup",
		"Once": "rtgo.Once", "Cond": "rtgo.Cond", "NewCond": "rtgo.NewCond", "Locker": "rt.Locker",
	},
	"time": {
		"Sleep": "rtgo.Sleep", "Now": "rtgo.Now", "Since": "rtgo.Since", "Until": "rtgo.Until",
		"After": "rtgo.After", "Tick": "rtgo.Tick", "NewTimer": "rtgo.NewTimer", "NewTicker": "rtgo.NewTicker",
		"AfterFunc": "rtgo.AfterFunc", "Timer": "rtgo.Timer", "Ticker": "rtgo.Ticker",
	},
	"runtime": {"Gosched": "rtgo.Gosched"},
	"context": {
		"WithCancel": "rtgo.WithCancel", "WithTimeout": "rtgo.WithTimeout", "WithDeadline": "rtgo.WithDeadline",
	},
	"runtime/pprof": {"Lookup": "rtgo.Lookup"},
	"math/rand": {
		"Intn": "rtgo.Intn", "Int31n": "rtgo.Int31n", "Int63n": "rtgo.Int63n", "Int": "rtgo.Int", "Float64": "rtgo.Float64",
	},
	"log": {"Fatal": "rtgo.Fatal", "Fatalf": "rtgo.Fatalf"},
}

// keep lists, per package, the members that translate to themselves:
// values and types with no scheduling or clock in them. A package not
// listed here nor in rewrites is kept whole when it is in pure.
var keep = map[string]map[string]bool{
	"time": {
		"Duration": true, "Time": true, "Nanosecond": true, "Microsecond": true, "Millisecond": true,
		"Second": true, "Minute": true, "Hour": true, "Unix": true, "Date": true, "UTC": true, "ParseDuration": true,
	},
	"context": {
		"Context": true, "CancelFunc": true, "Background": true, "TODO": true, "WithValue": true,
		"Canceled": true, "DeadlineExceeded": true,
	},
	"os":  {"Stdout": true, "Stderr": true, "Args": true},
	"log": {"Printf": true, "Println": true, "Print": true},
}

// pure are packages with nothing to schedule: kept whole. sync/atomic is
// here: its operations are not scheduling points, but they are
// deterministic under the simulator, which runs one task at a time.
var pure = map[string]bool{
	"errors": true, "fmt": true, "io": true, "strings": true, "strconv": true, "sort": true,
	"bytes": true, "math": true, "slices": true, "maps": true, "unicode": true, "unsafe": true,
	"sync/atomic": true, "reflect": true,
}

// pkgMember returns the package path and member name of a qualified
// identifier pkg.Name, or false.
func (tr *translator) pkgMember(n *ast.SelectorExpr) (string, string, bool) {
	id, ok := n.X.(*ast.Ident)
	if !ok {
		return "", "", false
	}
	pn, ok := tr.info.Uses[id].(*types.PkgName)
	if !ok {
		return "", "", false
	}
	return pn.Imported().Path(), n.Sel.Name, true
}

func (tr *translator) checkPackageRef(n *ast.SelectorExpr) {
	path, name, ok := tr.pkgMember(n)
	if !ok || pure[path] || keep[path][name] || rewrites[path][name] != "" {
		return
	}
	tr.issue(n, "%s.%s (package %s is outside what the translator maps onto the seam)", lastElem(path), name, path)
}

// packageRef is the replacement of a qualified identifier, or nil.
func (tr *translator) packageRef(n *ast.SelectorExpr) ast.Expr {
	path, name, ok := tr.pkgMember(n)
	if !ok {
		return nil
	}
	to := rewrites[path][name]
	if to == "" {
		return nil
	}
	if to[:3] == "rt." {
		tr.usesRT = true
		return &ast.SelectorExpr{X: ast.NewIdent("rt"), Sel: ast.NewIdent(to[3:])}
	}
	return tr.rtgo(to[5:])
}

func lastElem(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

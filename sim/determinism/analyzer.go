package determinism

import (
	"go/ast"

	"golang.org/x/tools/go/analysis"
)

// Analyzer reports the determinism contract's violations (Rules{}: the
// rules for code a simulated task runs; the production-code import rules
// need a module path and are Scan's) for go vet -vettool, through
// cmd/wtvet.
var Analyzer = &analysis.Analyzer{
	Name: "determinism",
	Doc:  "reports goroutines, wall-clock reads, sync locks and atomics, channels, global rand and order-dependent map iteration in code a windtunnel simulation runs",
	Run: func(pass *analysis.Pass) (any, error) {
		for _, f := range pass.Files {
			for _, v := range scanPass(pass, f) {
				pass.Reportf(v.pos, "%s: %s", v.Rule, v.Text)
			}
		}
		return nil, nil
	},
}

func scanPass(pass *analysis.Pass, f *ast.File) []found {
	return scanFile(pass.Fset, pass.TypesInfo, f, Rules{})
}

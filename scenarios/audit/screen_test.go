package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEverySeededCheckCanBeScreened keeps the one-seed screen of a mutant's
// checks (Runner.judgeMutant) honest: a screened check must fail only on
// what one seed breaks, whatever the number of seeds. claims.Run does so
// (findings.ScreenEnv). A family test could fly seeds through simtest
// itself, or assert on claims.Run's outcome (a count, a rate over the
// seeds). Such a test could fail at one seed on the code without any
// mutant, and the screen would then call every mutant of its claim caught.
func TestEverySeededCheckCanBeScreened(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	checked := 0
	for _, pkg := range Families {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, pkg)
		for _, path := range files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			require.NoError(t, err)
			for _, bad := range unscreenable(f) {
				assert.Fail(t, "a seeded check the screen cannot judge", "%s: %s", fset.Position(bad.Pos()), explainUnscreenable(bad))
			}
			checked++
		}
	}
	assert.Greater(t, checked, 20, "family test files read")
}

// unscreenable returns the calls in f that fly seeds outside claims.Run, and
// the claims.Run calls whose outcome is used.
func unscreenable(f *ast.File) []*ast.CallExpr {
	var bad []*ast.CallExpr
	statement := map[*ast.CallExpr]bool{} // claims.Run calls whose value is dropped
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.ExprStmt); ok {
			if c, ok := s.X.(*ast.CallExpr); ok {
				statement[c] = true
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		pkg, name := calledName(c)
		switch {
		case pkg == "simtest" && (name == "Seeds" || name == "Run"):
			bad = append(bad, c)
		case pkg == "claims" && name == "Run" && !statement[c]:
			bad = append(bad, c)
		}
		return true
	})
	return bad
}

func explainUnscreenable(c *ast.CallExpr) string {
	if pkg, _ := calledName(c); pkg == "simtest" {
		return "flies seeds through simtest, not claims.Run: its verdict over the seeds would fail the one-seed screen"
	}
	return "uses claims.Run's outcome: an assertion on it is over the seeds, which the one-seed screen cannot meet"
}

// calledName is the package and function of a call pkg.Name(...) or
// pkg.Name[T](...).
func calledName(c *ast.CallExpr) (pkg, name string) {
	fun := c.Fun
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, sel.Sel.Name
}

// The guard finds both kinds of unscreenable check.
func TestUnscreenableChecksAreFound(t *testing.T) {
	src := `package x
func TestA(t *testing.T) {
	claims.Run(t, c)
	o := claims.Run(t, c)
	_ = simtest.Seeds(t, opts, body)
	simtest.Run(t, opts, body)
	claims.Run[result](t, c)
	if claims.Run(t, c).Wrong > 0 {}
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, 0)
	require.NoError(t, err)
	var lines []int
	for _, c := range unscreenable(f) {
		lines = append(lines, fset.Position(c.Pos()).Line)
	}
	assert.Equal(t, []int{4, 5, 6, 8}, lines)
}

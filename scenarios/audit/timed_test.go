package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimedTestsAreTheOnesThatReadTheClock keeps TimedTests honest both
// ways. Every top-level test of a family package that reaches a clock read
// annotated //windtunnel:realtime is listed; else it would run beside
// other claim processes and measure them too. Every listed test exists and
// reaches one; else the list keeps a check out of the parallel part for
// nothing, or names a test that was renamed. "Reaches": the read is in the
// test, in a function it names, or in a method of a type it names, and so
// on. A method is reached through its type, not its name, so a call of
// some other type's Lock does not count.
func TestTimedTestsAreTheOnesThatReadTheClock(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	for _, pkg := range Families {
		reaching := clockReadingTests(t, filepath.Join(root, pkg))
		listed := append([]string{}, TimedTests[pkg]...)
		slices.Sort(listed)
		assert.Equal(t, reaching, listed, "%s: the tests that reach a //windtunnel:realtime clock read, and TimedTests", pkg)
	}
	for pkg := range TimedTests {
		assert.Contains(t, Families, pkg, "TimedTests names a package that is not a claim family")
	}
}

// The analysis must see a read through a helper and a method, and must not
// see one a test does not reach.
func TestClockReadingTestsFollowsHelpersAndTypes(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import ("testing"; "time")

type timer struct{}

func (timer) Lock() { _ = time.Now() //windtunnel:realtime
}

type other struct{}

func (other) Lock() {}

func helper() timer { return timer{} }

func direct() { _ = time.Now() } //windtunnel:realtime

func TestThroughType(t *testing.T) { helper().Lock() }
func TestDirect(t *testing.T)      { direct() }
func TestInline(t *testing.T) {
	_ = time.Since(time.Time{}) //windtunnel:realtime
}
func TestOtherLock(t *testing.T) { other{}.Lock() }
func TestNothing(t *testing.T)   {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(src), 0o644))
	assert.Equal(t, []string{"TestDirect", "TestInline", "TestThroughType"}, clockReadingTests(t, dir))
}

// clockReadingTests returns, sorted, the top-level tests in dir's Go files
// that reach a //windtunnel:realtime comment.
func clockReadingTests(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	refs := map[string]map[string]bool{} // node -> the names it mentions
	reads := map[string]bool{}           // nodes holding a clock read
	methods := map[string][]string{}     // type name -> its method nodes
	var tests []string
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		var annotated []token.Pos
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//windtunnel:realtime") {
					annotated = append(annotated, c.Pos())
				}
			}
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			node := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				typ := receiverType(fn.Recv.List[0].Type)
				node = typ + "." + fn.Name.Name
				methods[typ] = append(methods[typ], node)
			} else if strings.HasPrefix(node, "Test") {
				tests = append(tests, node)
			}
			if refs[node] == nil {
				refs[node] = map[string]bool{}
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id != fn.Name {
					refs[node][id.Name] = true
				}
				return true
			})
			// A comment at the end of a function's last line lies just past
			// its body: the line decides.
			endLine := fset.Position(fn.End()).Line
			for _, pos := range annotated {
				if pos >= fn.Pos() && fset.Position(pos).Line <= endLine {
					reads[node] = true
				}
			}
		}
	}
	var reaches func(node string, seen map[string]bool) bool
	reaches = func(node string, seen map[string]bool) bool {
		if seen[node] {
			return false
		}
		seen[node] = true
		if reads[node] {
			return true
		}
		for name := range refs[node] { //windtunnel:unordered any path will do
			if reaches(name, seen) {
				return true
			}
			for _, m := range methods[name] {
				if reaches(m, seen) {
					return true
				}
			}
		}
		return false
	}
	var out []string
	for _, test := range tests {
		if reaches(test, map[string]bool{}) {
			out = append(out, test)
		}
	}
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

func TestClaimPartsRunTheTimedChecksApart(t *testing.T) {
	parts, err := claimParts([]string{"./scenarios/oc", "./scenarios/tw"}, "^Test", TimedTests)
	require.NoError(t, err)
	var got [][]string
	for _, p := range parts {
		got = append(got, append(p.flags(), p.pkg, map[bool]string{true: "timed", false: "untimed"}[p.timed]))
	}
	assert.Equal(t, [][]string{
		{"-test.run=^Test", "./scenarios/oc", "untimed"},
		{"-test.run=^Test", "-test.skip=^(TestTW6_ConstantCost|TestTW8_RealPassTimes|TestTW9_IdlePassSpeed)$", "./scenarios/tw", "untimed"},
		{"-test.run=^(TestTW6_ConstantCost|TestTW8_RealPassTimes|TestTW9_IdlePassSpeed)$", "./scenarios/tw", "timed"},
	}, got)

	// A pattern keeps only the timed checks it selects, and its subtest levels.
	parts, err = claimParts([]string{"./scenarios/tw"}, "TestTW(8|9)_/seed=0x1", TimedTests)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, "^(TestTW8_RealPassTimes|TestTW9_IdlePassSpeed)$/seed=0x1", parts[1].run)
	parts, err = claimParts([]string{"./scenarios/tw"}, "^TestTW1_", TimedTests)
	require.NoError(t, err)
	assert.Len(t, parts, 1, "no timed check matches: no timed process")

	_, err = claimParts([]string{"./scenarios/tw"}, "(", TimedTests)
	assert.ErrorContains(t, err, `-run "("`)
}

func TestTheUntimedPartsStartInThePackagesOrder(t *testing.T) {
	pkgs := append([]string{"./scenarios/other"}, Families...)
	parts, err := claimParts(pkgs, "^Test", TimedTests)
	require.NoError(t, err)
	var started []string
	for _, i := range untimedParts(parts) {
		assert.False(t, parts[i].timed, "a timed part among the ones started at once")
		started = append(started, parts[i].pkg)
	}
	assert.Equal(t, pkgs, started)
}

func TestSplitTestPatternSplitsAsGoTestDoes(t *testing.T) {
	for pattern, want := range map[string][2]string{ //windtunnel:unordered independent cases
		"":                 {"", ""},
		"^TestA$":          {"^TestA$", ""},
		"TestA/sub":        {"TestA", "/sub"},
		"Test(A/B)/c":      {"Test(A/B)", "/c"},
		"Test[/]x/y":       {"Test[/]x", "/y"},
		`Test\/x/y`:        {`Test\/x`, "/y"},
		"TestA//":          {"TestA", "//"},
		"(unclosed/inside": {"(unclosed/inside", ""},
	} {
		top, rest := splitTestPattern(pattern)
		assert.Equal(t, want, [2]string{top, rest}, "%q", pattern)
	}
}

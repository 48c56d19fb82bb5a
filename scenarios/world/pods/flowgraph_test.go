package pods_test

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
)

// flowPackages are the packages whose flows pods.Flows lists.
var flowPackages = []string{
	"github.com/windtunnel/windtunnel/impl/accesschannels",
	"github.com/windtunnel/windtunnel/impl/membership",
	"github.com/windtunnel/windtunnel/impl/relay",
}

// faultInterfaces are the database and bus interfaces whose fallible
// methods (last result an error) are a flow's calls.
var faultInterfaces = map[string]bool{"Pool": true, "Conn": true, "Publisher": true}

const authzPath = "github.com/windtunnel/windtunnel/impl/authz"

// TestFlowsTableMatchesTheSource derives every (flow, call) pair from
// impl's source: the static call graph of the three packages, walked from
// each exported function and method along every path without a cycle, down
// to each call of a fallible method of authz.Pool, authz.Conn or
// authz.Publisher. It fails when the source has a pair pods.Flows lacks
// (a flow or call added without a row, so no check flies it under
// faults) and when a row names a pair the source no longer has.
func TestFlowsTableMatchesTheSource(t *testing.T) {
	got, err := derivedFlows()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no flow derived: the walk is broken")
	}
	listed := map[pods.FlowCall]bool{}
	for _, fc := range pods.Flows {
		if listed[fc.Key()] {
			t.Errorf("pods.Flows lists %s twice", fc)
		}
		listed[fc.Key()] = true
	}
	for _, fc := range got {
		if !listed[fc] {
			t.Errorf("impl has flow %s with no row in pods.Flows: add it, and fly it under faults in its family's check", fc)
		}
	}
	for _, fc := range pods.Flows {
		if !slices.Contains(got, fc.Key()) {
			t.Errorf("pods.Flows row %s names a flow or call impl no longer has", fc)
		}
	}
}

// derivedFlows loads the packages and walks their call graph.
func derivedFlows() ([]pods.FlowCall, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, flowPackages...)
	if err != nil {
		return nil, err
	}
	g := callGraph{edges: map[*types.Func][]*types.Func{}, leaves: map[*types.Func][]string{}}
	var roots []*types.Func
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors[0])
		}
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func)
				if !ok {
					continue
				}
				g.scan(p.TypesInfo, fn, fd.Body)
				if exportedAPI(fn) {
					roots = append(roots, fn)
				}
			}
		}
	}
	var out []pods.FlowCall
	for _, r := range roots {
		g.walk(r, []*types.Func{r}, func(path []*types.Func, call string) {
			fc := pods.FlowCall{Flow: pathName(path), Call: call}
			if !slices.Contains(out, fc) {
				out = append(out, fc)
			}
		})
	}
	return out, nil
}

type callGraph struct {
	edges  map[*types.Func][]*types.Func
	leaves map[*types.Func][]string
}

// scan records fn's calls: to functions of the flow packages (edges) and to
// fallible methods of the fault interfaces (leaves), closures included.
func (g *callGraph) scan(info *types.Info, fn *types.Func, body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var obj types.Object
		switch f := ast.Unparen(call.Fun).(type) {
		case *ast.Ident:
			obj = info.Uses[f]
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[f]; ok {
				obj = sel.Obj()
			} else {
				obj = info.Uses[f.Sel]
			}
		case *ast.IndexExpr: // a generic function instantiated explicitly
			if id, ok := f.X.(*ast.Ident); ok {
				obj = info.Uses[id]
			}
		}
		callee, ok := obj.(*types.Func)
		if !ok || callee.Pkg() == nil {
			return true
		}
		callee = callee.Origin()
		if leaf := faultCall(callee); leaf != "" {
			if !slices.Contains(g.leaves[fn], leaf) {
				g.leaves[fn] = append(g.leaves[fn], leaf)
			}
			return true
		}
		if slices.Contains(flowPackages, callee.Pkg().Path()) && !slices.Contains(g.edges[fn], callee) {
			g.edges[fn] = append(g.edges[fn], callee)
		}
		return true
	})
}

// faultCall names callee as "authz.Conn.MemberChannels" when it is a
// fallible method of a fault interface, else "".
func faultCall(callee *types.Func) string {
	sig := callee.Type().(*types.Signature)
	if sig.Recv() == nil || callee.Pkg().Path() != authzPath {
		return ""
	}
	named, ok := types.Unalias(sig.Recv().Type()).(*types.Named)
	if !ok || !types.IsInterface(named) || !faultInterfaces[named.Obj().Name()] {
		return ""
	}
	res := sig.Results()
	if res.Len() == 0 || res.At(res.Len()-1).Type().String() != "error" {
		return ""
	}
	return "authz." + named.Obj().Name() + "." + callee.Name()
}

// walk visits every cycle-free path from path's last function to a leaf.
func (g *callGraph) walk(fn *types.Func, path []*types.Func, visit func([]*types.Func, string)) {
	for _, leaf := range g.leaves[fn] {
		visit(path, leaf)
	}
	for _, next := range g.edges[fn] {
		if slices.Contains(path, next) {
			continue
		}
		g.walk(next, append(slices.Clone(path), next), visit)
	}
}

// exportedAPI: an exported function, or an exported method of an exported
// type.
func exportedAPI(fn *types.Func) bool {
	if !fn.Exported() {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return true
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Exported()
}

// pathName spells a path as pods.Flows does: the first step qualified
// ("membership.Cache.IsMember"), later steps by their name within the
// package, qualified again where the path enters another package.
func pathName(path []*types.Func) string {
	var b strings.Builder
	for i, fn := range path {
		if i > 0 {
			b.WriteString(">")
		}
		if i == 0 || fn.Pkg() != path[i-1].Pkg() {
			b.WriteString(fn.Pkg().Name() + ".")
		}
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if named, ok := types.Unalias(t).(*types.Named); ok {
				b.WriteString(named.Obj().Name() + ".")
			}
		}
		b.WriteString(fn.Name())
	}
	return b.String()
}

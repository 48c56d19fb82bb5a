package translate

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"

	"golang.org/x/tools/go/ast/astutil"
)

// translator rewrites one file in place.
type translator struct {
	fset    *token.FileSet
	info    *types.Info
	file    *ast.File
	tpkg    *types.Package // the package translated
	issues  []Issue
	usesRT  bool
	usesGo  bool
	nextTmp int
	// Decisions made on the original nodes (pre), applied once their
	// children are rewritten (post): a receive from ctx.Done(), a range or
	// builtin call over a channel.
	doneRecv map[*ast.UnaryExpr]ast.Expr // <-ctx.Done(): the context
	doneVal  map[*ast.CallExpr]bool      // ctx.Done() kept as a value
	addr     map[*ast.CallExpr]bool      // uintptr(unsafe.Pointer(p))
	wrapConv map[*ast.CallExpr]bool      // N(c) of a named channel type with methods
	unwrap   map[ast.Expr]bool           // a value of such an N used as a channel
	ptrKey   map[ast.Expr]bool           // a key entering a map keyed by pointers
	ptrRange map[*ast.RangeStmt]bool     // range over a map keyed by pointers
	chanOp   map[ast.Node]bool           // range over a channel; close/len/cap of one
	comms    map[*ast.CommClause]comm    // select cases, as written
	mapRange map[*ast.RangeStmt]bool     // range over a map with ordered keys
}

func (tr *translator) pkg() *types.Package {
	if obj := tr.info.Defs[tr.file.Name]; obj != nil {
		return obj.Pkg()
	}
	return nil
}

func (tr *translator) pos(n ast.Node) string {
	p := tr.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

func (tr *translator) issue(n ast.Node, format string, a ...any) {
	tr.issues = append(tr.issues, Issue{Pos: tr.pos(n), Construct: fmt.Sprintf(format, a...)})
}

// rtgo returns the expression rtgo.name.
func (tr *translator) rtgo(name string) ast.Expr {
	tr.usesGo = true
	return &ast.SelectorExpr{X: ast.NewIdent("rtgo"), Sel: ast.NewIdent(name)}
}

func (tr *translator) call(name string, args ...ast.Expr) *ast.CallExpr {
	return &ast.CallExpr{Fun: tr.rtgo(name), Args: args}
}

func (tr *translator) tmp(prefix string) string {
	tr.nextTmp++
	return "_wt" + prefix + strconv.Itoa(tr.nextTmp)
}

func (tr *translator) run() {
	tr.doneRecv = map[*ast.UnaryExpr]ast.Expr{}
	tr.doneVal = map[*ast.CallExpr]bool{}
	tr.addr = map[*ast.CallExpr]bool{}
	tr.chanOp = map[ast.Node]bool{}
	tr.comms = map[*ast.CommClause]comm{}
	tr.mapRange = map[*ast.RangeStmt]bool{}
	tr.wrapConv = map[*ast.CallExpr]bool{}
	tr.unwrap = map[ast.Expr]bool{}
	tr.ptrKey = map[ast.Expr]bool{}
	tr.ptrRange = map[*ast.RangeStmt]bool{}
	ast.Inspect(tr.file, tr.classify)
	tr.classifyWrapped()
	astutil.Apply(tr.file, nil, tr.post)
	tr.fixImports()
}

func (tr *translator) isChan(e ast.Expr) bool {
	t := tr.info.TypeOf(e)
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Chan)
	return ok
}

// ctxDone returns ctx when e is ctx.Done() of a context.Context.
func (tr *translator) ctxDone(e ast.Expr) (ast.Expr, bool) {
	c, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(c.Args) != 0 {
		return nil, false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Done" {
		return nil, false
	}
	s := tr.info.Selections[sel]
	if s == nil || s.Obj().Pkg() == nil || s.Obj().Pkg().Path() != "context" {
		return nil, false
	}
	return sel.X, true
}

// classify looks at the original nodes, with their types, and records what
// the post-order rewrite must do; it reports what cannot be translated.
func (tr *translator) classify(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.UnaryExpr:
		if n.Op == token.ARROW {
			if ctx, ok := tr.ctxDone(n.X); ok {
				tr.doneRecv[n] = ctx
			}
		}
	case *ast.CallExpr:
		if _, ok := tr.ctxDone(n); ok && !tr.doneUsedInReceive(n) {
			tr.doneVal[n] = true
		}
		if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
			if b, ok := tr.info.Uses[id].(*types.Builtin); ok {
				switch b.Name() {
				case "close", "len", "cap":
					if len(n.Args) == 1 && tr.isChan(n.Args[0]) {
						tr.chanOp[n] = true
					}
				}
			}
		}
		tr.classifyAddr(n)
	case *ast.RangeStmt:
		if tr.isChan(n.X) {
			tr.chanOp[n] = true
		}
		if t := tr.info.TypeOf(n.X); t != nil {
			if m, ok := t.Underlying().(*types.Map); ok {
				if b, ok := m.Key().Underlying().(*types.Basic); ok && b.Info()&types.IsOrdered != 0 {
					tr.mapRange[n] = true
				} else if ptrKeyed(m) {
					tr.ptrRange[n] = true
				} else {
					tr.issue(n, "range over a map keyed by %s: its order is random and no key order makes it deterministic", types.TypeString(m.Key(), types.RelativeTo(tr.pkg())))
				}
			}
		}
	case *ast.CommClause:
		if n.Comm != nil {
			cm, ok := classifyComm(n)
			if !ok {
				tr.issue(n, "select case of an unexpected shape")
			}
			tr.comms[n] = cm
		}
	case *ast.GoStmt:
		if id, ok := ast.Unparen(n.Call.Fun).(*ast.Ident); ok {
			if _, ok := tr.info.Uses[id].(*types.Builtin); ok && !tr.chanOp[n.Call] && !(id.Name == "close" && len(n.Call.Args) == 1 && tr.isChan(n.Call.Args[0])) {
				tr.issue(n, "go statement calling the builtin %s", id.Name)
			}
		}
	case *ast.SelectorExpr:
		tr.checkPackageRef(n)
	}
	tr.classifyPtrKey(n)
	return true
}

// doneUsedInReceive reports whether the call ctx.Done() is the operand of a
// receive (<-ctx.Done()), which translates; any other use is a real channel.
func (tr *translator) doneUsedInReceive(call *ast.CallExpr) bool {
	found := false
	ast.Inspect(tr.file, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.ARROW && ast.Unparen(u.X) == call {
			found = true
		}
		return !found
	})
	return found
}

func (tr *translator) post(c *astutil.Cursor) bool {
	orig := c.Node()
	defer tr.unwrapped(c, orig)
	if e, ok := orig.(ast.Expr); ok && tr.ptrKey[e] {
		defer func() { c.Replace(tr.call("Key", c.Node().(ast.Expr))) }()
	}
	if tr.postWrapped(c, orig) {
		return true
	}
	switch n := c.Node().(type) {
	case *ast.ChanType:
		tr.usesRT = true
		c.Replace(&ast.StarExpr{X: &ast.IndexExpr{
			X:     &ast.SelectorExpr{X: ast.NewIdent("rt"), Sel: ast.NewIdent("Chan")},
			Index: n.Value,
		}})
	case *ast.SendStmt:
		c.Replace(&ast.ExprStmt{X: &ast.CallExpr{Fun: tr.call("Send", n.Chan), Args: []ast.Expr{n.Value}}})
	case *ast.UnaryExpr:
		if n.Op != token.ARROW {
			break
		}
		if ctx, ok := tr.doneRecv[n]; ok {
			c.Replace(tr.waitDone(ctx))
			break
		}
		c.Replace(tr.call("Recv", n.X))
	case *ast.AssignStmt:
		tr.recv2(n.Rhs, len(n.Lhs))
	case *ast.ValueSpec:
		tr.recv2(n.Values, len(n.Names))
	case *ast.RangeStmt:
		if tr.chanOp[n] {
			n.X = tr.call("Range", n.X)
		}
		if tr.mapRange[n] {
			n.X = tr.call("Sorted", n.X) // a deterministic order: the keys', sorted
		}
		if tr.ptrRange[n] {
			n.X = tr.call("ByAddr", n.X) // the keys' stand-in addresses, drawn from the seed
		}
	case *ast.CallExpr:
		switch {
		case tr.doneVal[n]:
			c.Replace(tr.call("Done", n.Fun.(*ast.SelectorExpr).X))
		case tr.addr[n]:
			n.Args[0] = tr.call("Addr", n.Args[0])
		default:
			tr.rewriteCall(c, n)
		}
	case *ast.GoStmt:
		tr.rewriteGo(c, n)
	case *ast.SelectStmt:
		c.Replace(tr.rewriteSelect(n))
	case *ast.SelectorExpr:
		if e := tr.packageRef(n); e != nil {
			c.Replace(e)
		}
	}
	return true
}

// waitDone is <-ctx.Done() as an expression of the same (ignored) value:
// rtgo.WaitDone returns nothing, so it is wrapped to yield struct{}{}.
func (tr *translator) waitDone(ctx ast.Expr) ast.Expr {
	body := &ast.BlockStmt{List: []ast.Stmt{
		&ast.ExprStmt{X: tr.call("WaitDone", ctx)},
		&ast.ReturnStmt{Results: []ast.Expr{&ast.CompositeLit{Type: &ast.StructType{Fields: &ast.FieldList{}}}}},
	}}
	fn := &ast.FuncLit{Type: &ast.FuncType{Params: &ast.FieldList{}, Results: &ast.FieldList{List: []*ast.Field{{Type: &ast.StructType{Fields: &ast.FieldList{}}}}}}, Body: body}
	return &ast.CallExpr{Fun: fn}
}

// recv2 turns the receive of a two-value assignment (v, ok := <-c, already
// rewritten to rtgo.Recv(c)) into rtgo.Recv2(c).
func (tr *translator) recv2(rhs []ast.Expr, lhs int) {
	if lhs != 2 || len(rhs) != 1 {
		return
	}
	if call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr); ok {
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Recv" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "rtgo" {
				sel.Sel.Name = "Recv2"
			}
		}
	}
}

func (tr *translator) rewriteCall(c *astutil.Cursor, n *ast.CallExpr) {
	id, ok := ast.Unparen(n.Fun).(*ast.Ident)
	if !ok {
		return
	}
	if _, ok := tr.info.Uses[id].(*types.Builtin); !ok {
		return
	}
	switch id.Name {
	case "close", "len", "cap":
		if tr.chanOp[n] {
			name := map[string]string{"close": "Close", "len": "Len", "cap": "Cap"}[id.Name]
			c.Replace(tr.call(name, n.Args[0]))
		}
	case "make":
		// make(chan T[, n]): the type argument is already *rt.Chan[T].
		star, ok := n.Args[0].(*ast.StarExpr)
		if !ok {
			return
		}
		ix, ok := star.X.(*ast.IndexExpr)
		if !ok {
			return
		}
		if sel, ok := ix.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Chan" || sel.X.(*ast.Ident).Name != "rt" {
			return
		}
		size := ast.Expr(&ast.BasicLit{Kind: token.INT, Value: "0"})
		if len(n.Args) > 1 {
			size = &ast.CallExpr{Fun: ast.NewIdent("int"), Args: []ast.Expr{n.Args[1]}}
		}
		c.Replace(&ast.CallExpr{Fun: &ast.IndexExpr{X: tr.rtgo("MakeChan"), Index: ix.Index}, Args: []ast.Expr{size}})
	}
}

// rewriteGo turns go f(args) into rtgo.Go("file:line", ...), evaluating f
// and its arguments where the go statement stands, as Go does.
func (tr *translator) rewriteGo(c *astutil.Cursor, n *ast.GoStmt) {
	name := &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(tr.pos(n))}
	call := n.Call
	if lit, ok := call.Fun.(*ast.FuncLit); ok && len(call.Args) == 0 {
		c.Replace(&ast.ExprStmt{X: tr.call("Go", name, lit)})
		return
	}
	// { _f, _a0 := f, a0; rtgo.Go(name, func() { _f(_a0) }) }; constants
	// stay inline, so an untyped one keeps the parameter's type.
	var lhs, rhs []ast.Expr
	bind := func(e ast.Expr) ast.Expr {
		if tv, ok := tr.info.Types[e]; ok && (tv.Value != nil || tv.IsNil()) {
			return e
		}
		v := ast.NewIdent(tr.tmp("G"))
		lhs, rhs = append(lhs, v), append(rhs, e)
		return ast.NewIdent(v.Name)
	}
	fun := call.Fun
	// A call already rewritten (go close(c), now rtgo.Close(c)) keeps its
	// function, which is generic, and binds only its arguments.
	_, builtin := tr.info.Uses[identOf(call.Fun)].(*types.Builtin)
	tv, typed := tr.info.Types[call.Fun]
	if !builtin && typed && !tv.IsType() {
		fun = bind(call.Fun)
	}
	var args []ast.Expr
	for _, a := range call.Args {
		args = append(args, bind(a))
	}
	inner := &ast.CallExpr{Fun: fun, Args: args, Ellipsis: call.Ellipsis}
	goCall := &ast.ExprStmt{X: tr.call("Go", name, &ast.FuncLit{
		Type: &ast.FuncType{Params: &ast.FieldList{}},
		Body: &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: inner}}},
	})}
	if len(lhs) == 0 {
		c.Replace(goCall)
		return
	}
	c.Replace(&ast.BlockStmt{List: []ast.Stmt{
		&ast.AssignStmt{Lhs: lhs, Tok: token.DEFINE, Rhs: rhs},
		goCall,
	}})
}

// identOf is e's identifier, or an empty one.
func identOf(e ast.Expr) *ast.Ident {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		return id
	}
	return &ast.Ident{}
}

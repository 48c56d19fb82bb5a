package translate

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
)

// A named channel type with methods cannot become a named pointer (a
// pointer type has no methods), so it becomes a struct holding the channel,
// field wtC: a conversion N(c) becomes N{c}, and a value of N used as a
// channel (send, receive, select, range, close, len, cap) becomes v.wtC.
// A value of N anywhere else must stay an N (a method call, an N or an
// interface assigned, passed or returned, an N compared with an N); any other
// use would need the channel inside and is refused.

const wrapField = "wtC"

// wrapped reports whether t is a named channel type of this package with
// methods.
func (tr *translator) wrapped(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() != tr.tpkg || n.NumMethods() == 0 {
		return false
	}
	_, ok = n.Underlying().(*types.Chan)
	return ok
}

// keepsN reports whether a value of N may go where type t is expected.
func keepsN(t types.Type, n types.Type) bool {
	if t == nil {
		return false
	}
	return types.Identical(t, n) || types.IsInterface(t)
}

// classifyWrapped walks the file with a stack of parents and records the
// operands to unwrap, the conversions to rewrite, and what it refuses.
func (tr *translator) classifyWrapped() {
	var stack []ast.Node
	ast.Inspect(tr.file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if e, ok := n.(ast.Expr); ok && len(stack) > 0 {
			if tv, ok := tr.info.Types[e]; ok && tv.IsValue() && tr.wrapped(tv.Type) {
				tr.wrappedUse(e, tv.Type, stack)
			}
		}
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) == 1 {
			if tv, ok := tr.info.Types[c.Fun]; ok && tv.IsType() && tr.wrapped(tv.Type) && !tr.wrapped(tr.info.TypeOf(c.Args[0])) {
				tr.wrapConv[c] = true
			}
		}
		stack = append(stack, n)
		return true
	})
}

func (tr *translator) wrappedUse(e ast.Expr, n types.Type, stack []ast.Node) {
	parent := stack[len(stack)-1]
	ok := false
	switch p := parent.(type) {
	case *ast.SendStmt:
		ok = p.Chan == e
		tr.unwrap[e] = ok
	case *ast.UnaryExpr:
		ok = p.Op == token.ARROW
		tr.unwrap[e] = ok
	case *ast.RangeStmt:
		ok = p.X == e
		tr.unwrap[e] = ok
	case *ast.SelectorExpr:
		ok = p.X == e
	case *ast.CallExpr:
		if tv, isT := tr.info.Types[p.Fun]; isT && tv.IsType() {
			ok = keepsN(tv.Type, n)
			break
		}
		if id, isID := ast.Unparen(p.Fun).(*ast.Ident); isID {
			if b, isB := tr.info.Uses[id].(*types.Builtin); isB {
				switch b.Name() {
				case "close", "len", "cap":
					ok = true
					tr.unwrap[e] = true
				}
				break
			}
		}
		if sig, isSig := tr.info.TypeOf(p.Fun).(*types.Signature); isSig {
			for i, a := range p.Args {
				if a == e {
					ok = keepsN(paramType(sig, i, p.Ellipsis.IsValid()), n)
				}
			}
		}
	case *ast.ReturnStmt:
		if sig := enclosingSig(tr.info, stack); sig != nil && sig.Results().Len() == len(p.Results) {
			for i, r := range p.Results {
				if r == e {
					ok = keepsN(sig.Results().At(i).Type(), n)
				}
			}
		}
	case *ast.AssignStmt:
		if len(p.Lhs) == len(p.Rhs) {
			for i, r := range p.Rhs {
				if r == e {
					ok = keepsN(tr.info.TypeOf(p.Lhs[i]), n)
				}
			}
		}
		if p.Tok == token.DEFINE || p.Tok == token.ASSIGN {
			for _, l := range p.Lhs {
				ok = ok || l == e
			}
		}
	case *ast.ValueSpec:
		for i, v := range p.Values {
			if v == e && len(p.Names) == len(p.Values) {
				ok = keepsN(tr.info.TypeOf(p.Names[i]), n)
			}
		}
	case *ast.BinaryExpr:
		if p.Op == token.EQL || p.Op == token.NEQ {
			ok = types.Identical(tr.info.TypeOf(p.X), tr.info.TypeOf(p.Y))
		}
	}
	if !ok {
		tr.issue(e, "a value of the named channel type %s used where the translation cannot keep it (it becomes a struct holding the channel)", types.TypeString(n, types.RelativeTo(tr.tpkg)))
	}
}

// paramType is the type argument i of a call to sig takes.
func paramType(sig *types.Signature, i int, ellipsis bool) types.Type {
	ps := sig.Params()
	if sig.Variadic() && i >= ps.Len()-1 {
		last := ps.At(ps.Len() - 1).Type()
		if ellipsis {
			return last
		}
		return last.(*types.Slice).Elem()
	}
	if i < ps.Len() {
		return ps.At(i).Type()
	}
	return nil
}

// enclosingSig is the signature of the innermost function on the stack.
func enclosingSig(info *types.Info, stack []ast.Node) *types.Signature {
	for i := len(stack) - 1; i >= 0; i-- {
		switch f := stack[i].(type) {
		case *ast.FuncLit:
			s, _ := info.TypeOf(f).(*types.Signature)
			return s
		case *ast.FuncDecl:
			if obj, ok := info.Defs[f.Name].(*types.Func); ok {
				return obj.Type().(*types.Signature)
			}
			return nil
		}
	}
	return nil
}

// postWrapped rewrites a wrapped type's declaration and a conversion to
// it; true when it replaced n.
func (tr *translator) postWrapped(c *astutil.Cursor, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.TypeSpec:
		if obj := tr.info.Defs[n.Name]; obj != nil && tr.wrapped(obj.Type()) {
			n.Type = &ast.StructType{Fields: &ast.FieldList{List: []*ast.Field{{Names: []*ast.Ident{ast.NewIdent(wrapField)}, Type: n.Type}}}}
		}
	case *ast.CallExpr:
		if tr.wrapConv[n] {
			// In parentheses: a composite literal in an if or for header needs them.
			c.Replace(&ast.ParenExpr{X: &ast.CompositeLit{Type: n.Fun, Elts: n.Args}})
			return true
		}
	}
	return false
}

// unwrapped replaces orig, already rewritten, with its channel when it is
// a wrapped value used as a channel.
func (tr *translator) unwrapped(c *astutil.Cursor, orig ast.Node) {
	if e, ok := orig.(ast.Expr); ok && tr.unwrap[e] {
		c.Replace(&ast.SelectorExpr{X: c.Node().(ast.Expr), Sel: ast.NewIdent(wrapField)})
	}
}

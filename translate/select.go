package translate

import (
	"go/ast"
	"go/token"
	"strconv"
)

// comm is a select case as classify saw it: the original receive or send
// node, whose fields hold the rewritten operands by the time the select is
// rewritten (children first).
type comm struct {
	recv *ast.UnaryExpr // <-c
	send *ast.SendStmt  // c <- v
	lhs  []ast.Expr     // v[, ok] of v, ok := <-c or v, ok = <-c
	tok  token.Token    // := or =
}

// classifyComm records what the case of a select does; false when the
// comm clause has a shape Go does not allow either.
func classifyComm(cc *ast.CommClause) (comm, bool) {
	switch s := cc.Comm.(type) {
	case *ast.SendStmt:
		return comm{send: s}, true
	case *ast.ExprStmt:
		if u, ok := ast.Unparen(s.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			return comm{recv: u}, true
		}
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			if u, ok := ast.Unparen(s.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				return comm{recv: u, lhs: s.Lhs, tok: s.Tok}, true
			}
		}
	}
	return comm{}, false
}

// rewriteSelect turns a select into a switch on rtgo.Select:
//
//	switch _wtC1, _wtC2 := rtgo.RecvCase(a), rtgo.SendCase(b, v); rtgo.Select(false, _wtC1, _wtC2) {
//	case 0:
//		x, ok := _wtC1.V, _wtC1.OK
//		...
//	default: // Select returned -1
//	}
//
// The cases' channels and sent values are evaluated once, in source order,
// before the select, as Go does; a label on the select labels the switch,
// and break keeps its meaning.
func (tr *translator) rewriteSelect(n *ast.SelectStmt) ast.Stmt {
	var vars, inits, ops []ast.Expr
	hasDefault := false
	var clauses []ast.Stmt
	idx := 0
	for _, st := range n.Body.List {
		cc := st.(*ast.CommClause)
		if cc.Comm == nil {
			hasDefault = true
			clauses = append(clauses, &ast.CaseClause{Case: cc.Case, Colon: cc.Colon, Body: cc.Body}) // Select's -1
			continue
		}
		cm, ok := tr.comms[cc]
		if !ok || (cm.recv == nil && cm.send == nil) {
			continue // reported by classify
		}
		v := ast.NewIdent(tr.tmp("C"))
		vars = append(vars, v)
		ops = append(ops, ast.NewIdent(v.Name))
		body := cc.Body
		switch {
		case cm.send != nil:
			inits = append(inits, &ast.CallExpr{Fun: tr.call("SendCase", cm.send.Chan), Args: []ast.Expr{cm.send.Value}})
		case tr.doneRecv[cm.recv] != nil:
			inits = append(inits, tr.call("DoneCase", tr.doneRecv[cm.recv]))
		default:
			inits = append(inits, tr.call("RecvCase", cm.recv.X))
		}
		if len(cm.lhs) > 0 && cm.send == nil {
			rhs := []ast.Expr{&ast.SelectorExpr{X: ast.NewIdent(v.Name), Sel: ast.NewIdent("V")}}
			if len(cm.lhs) == 2 {
				rhs = append(rhs, &ast.SelectorExpr{X: ast.NewIdent(v.Name), Sel: ast.NewIdent("OK")})
			}
			if tr.doneRecv[cm.recv] != nil {
				tr.issue(cc, "select case assigning the value received from ctx.Done()")
			}
			body = append([]ast.Stmt{&ast.AssignStmt{Lhs: cm.lhs, Tok: cm.tok, Rhs: rhs}}, body...)
		}
		clauses = append(clauses, &ast.CaseClause{Case: cc.Case, List: []ast.Expr{intLit(idx, cc.Case)}, Colon: cc.Colon, Body: body})
		idx++
	}
	if !hasDefault {
		// Unreachable (Select returns a case), but it keeps a select that
		// was a terminating statement one as a switch.
		clauses = append(clauses, &ast.CaseClause{Case: n.Body.Rbrace, Colon: n.Body.Rbrace, Body: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
			Fun: ast.NewIdent("panic"), Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: `"unreachable: a select without default returned none"`}},
		}}}})
	}
	sel := tr.call("Select", append([]ast.Expr{ast.NewIdent(strconv.FormatBool(hasDefault))}, ops...)...)
	sel.Fun.(*ast.SelectorExpr).X.(*ast.Ident).NamePos = n.Select
	sel.Lparen, sel.Rparen = n.Select, n.Select
	sw := &ast.SwitchStmt{
		Switch: n.Select,
		Tag:    sel,
		Body:   &ast.BlockStmt{Lbrace: n.Body.Lbrace, List: clauses, Rbrace: n.Body.Rbrace},
	}
	if len(vars) > 0 {
		sw.Init = &ast.AssignStmt{Lhs: vars, Tok: token.DEFINE, Rhs: inits}
	}
	return sw
}

func intLit(i int, pos token.Pos) *ast.BasicLit {
	return &ast.BasicLit{ValuePos: pos, Kind: token.INT, Value: strconv.Itoa(i)}
}

package mechanical

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// An edit replaces the source bytes [from, to) of one file with text: one
// mechanical mutation, before it is made into a mutant.
type edit struct {
	op       string // the operator's name, a column of the efficacy table
	from, to int
	text     string
	what     string // the change in words
}

// Operators, in the order the efficacy table lists them.
const (
	OpCompare = "compare"  // < <= > >= == != to its neighbour or its negation
	OpBoolean = "boolean"  // && || swapped, ! removed
	OpArith   = "arith"    // + - and * / swapped, % to *, x±1 to x, ++ and -- swapped
	OpSlice   = "slice"    // a slice bound moved by one
	OpDelete  = "delete"   // a call, assignment or increment deleted
	OpBranch  = "branch"   // if/else bodies swapped, a lone condition negated
	OpReturn  = "return"   // an early return removed
	OpConst   = "constant" // a literal ±1 or ×1.01
	OpLoop    = "loop"     // break and continue swapped
)

// Ops lists every operator.
var Ops = []string{OpCompare, OpBoolean, OpArith, OpSlice, OpDelete, OpBranch, OpReturn, OpConst, OpLoop}

// compareSwaps moves a comparison to its boundary neighbour (an off-by-one)
// and compareNegations to its opposite (a condition turned around); == and
// != are each other's both.
var (
	compareSwaps = map[token.Token]token.Token{
		token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR,
		token.EQL: token.NEQ, token.NEQ: token.EQL,
	}
	compareNegations = map[token.Token]token.Token{
		token.LSS: token.GEQ, token.LEQ: token.GTR, token.GTR: token.LEQ, token.GEQ: token.LSS,
	}
	arithSwaps = map[token.Token]token.Token{
		token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL,
	}
)

// edits lists every mutation of one parsed file. src is the file's source,
// off converts a position to a byte offset in it.
func edits(f *ast.File, src []byte, off func(token.Pos) int) []edit {
	var out []edit
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	add := func(op string, n ast.Node, repl, what string) {
		out = append(out, edit{op: op, from: off(n.Pos()), to: off(n.End()), text: repl, what: what})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			// Imports and types hold no decision; constants and variables do.
			return n.Tok == token.CONST || n.Tok == token.VAR
		case *ast.BinaryExpr:
			x, y := text(n.X), text(n.Y)
			for _, table := range []map[token.Token]token.Token{compareSwaps, compareNegations} {
				if to, ok := table[n.Op]; ok {
					add(OpCompare, n, x+" "+to.String()+" "+y, fmt.Sprintf("%s → %s", n.Op, to))
				}
			}
			switch n.Op {
			case token.LAND:
				add(OpBoolean, n, x+" || "+y, "&& → ||")
			case token.LOR:
				add(OpBoolean, n, x+" && "+y, "|| → &&")
			case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
				if (n.Op == token.ADD || n.Op == token.SUB) && isOne(n.Y) {
					add(OpArith, n, x, fmt.Sprintf("%s %s 1 → %s", x, n.Op, x))
				} else if !isString(n) {
					flip := arithSwaps[n.Op]
					add(OpArith, n, x+" "+flip.String()+" "+y, fmt.Sprintf("%s → %s", n.Op, flip))
				}
			}
		case *ast.IncDecStmt:
			flip := map[token.Token]token.Token{token.INC: token.DEC, token.DEC: token.INC}[n.Tok]
			add(OpArith, n, text(n.X)+flip.String(), fmt.Sprintf("%s → %s", n.Tok, flip))
		case *ast.BranchStmt:
			// A labelled break or continue keeps its label: only the kind
			// of jump changes.
			if to, ok := map[token.Token]token.Token{token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK}[n.Tok]; ok {
				repl := to.String()
				if n.Label != nil {
					repl += " " + n.Label.Name
				}
				add(OpLoop, n, repl, fmt.Sprintf("%s → %s", n.Tok, to))
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				add(OpBoolean, n, "("+text(n.X)+")", "! removed")
			}
		case *ast.SliceExpr:
			if n.High != nil && !n.Slice3 {
				add(OpSlice, n.High, "("+text(n.High)+")-1", "slice end one lower")
			}
			if n.Low != nil && !n.Slice3 {
				add(OpSlice, n.Low, "("+text(n.Low)+")+1", "slice start one higher")
			}
		case *ast.BlockStmt:
			for _, s := range n.List {
				if deletable(s) {
					add(OpDelete, s, "", "deleted: "+oneLine(text(s)))
				}
			}
		case *ast.IfStmt:
			if n.Init == nil {
				if els, ok := n.Else.(*ast.BlockStmt); ok {
					out = append(out, edit{op: OpBranch, from: off(n.Body.Pos()), to: off(els.End()),
						text: text(els) + " else " + text(n.Body), what: "if/else bodies swapped"})
				} else if n.Else == nil {
					add(OpBranch, n.Cond, "!("+text(n.Cond)+")", "condition negated")
				}
			}
			if n.Else == nil && endsInReturn(n.Body) {
				add(OpReturn, n, "", "early return removed: if "+oneLine(text(n.Cond)))
			}
		case *ast.BasicLit:
			switch n.Kind {
			case token.INT:
				if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
					add(OpConst, n, strconv.FormatInt(v+1, 10), fmt.Sprintf("%s → %d", n.Value, v+1))
					if v > 0 {
						add(OpConst, n, strconv.FormatInt(v-1, 10), fmt.Sprintf("%s → %d", n.Value, v-1))
					}
				}
			case token.FLOAT:
				if v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && v != 0 {
					add(OpConst, n, strconv.FormatFloat(v*1.01, 'g', -1, 64), fmt.Sprintf("%s → ×1.01", n.Value))
				}
			}
		}
		return true
	})
	return out
}

// deletable reports whether deleting the statement is a mutation that may
// compile: a call made for its effect, an assignment to something that
// exists already, an increment.
func deletable(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ExprStmt:
		_, call := s.X.(*ast.CallExpr)
		return call
	case *ast.AssignStmt:
		return s.Tok != token.DEFINE
	case *ast.IncDecStmt, *ast.DeferStmt:
		return true
	}
	return false
}

func endsInReturn(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

func isOne(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.INT && l.Value == "1"
}

// isString reports a concatenation of string literals, which - cannot
// replace.
func isString(b *ast.BinaryExpr) bool {
	for _, e := range []ast.Expr{b.X, b.Y} {
		if l, ok := e.(*ast.BasicLit); ok && l.Kind == token.STRING {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

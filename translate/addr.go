package translate

import (
	"go/ast"
	"go/types"
)

// classifyAddr looks at a conversion between a pointer and an integer. A
// pointer's address as a number (uintptr(unsafe.Pointer(p))) becomes a
// stand-in drawn from the seed (rtgo.Addr): a real address changes from run
// to run, so no seed could replay a run that reads one. A number turned
// back into a pointer would need the real address, so it is refused.
func (tr *translator) classifyAddr(n *ast.CallExpr) {
	tv, ok := tr.info.Types[n.Fun]
	if !ok || !tv.IsType() || len(n.Args) != 1 {
		return
	}
	to, from := basicKind(tv.Type), basicKind(tr.info.TypeOf(n.Args[0]))
	switch {
	case to == types.Uintptr && from == types.UnsafePointer:
		tr.addr[n] = true
	case to == types.UnsafePointer && from == types.Uintptr:
		tr.issue(n, "unsafe.Pointer(uintptr): a number turned back into a pointer needs the real address, which the translation replaces")
	}
}

// basicKind is t's underlying basic kind, or Invalid.
func basicKind(t types.Type) types.BasicKind {
	if t == nil {
		return types.Invalid
	}
	if b, ok := t.Underlying().(*types.Basic); ok {
		return b.Kind()
	}
	return types.Invalid
}

package translate

import (
	"go/ast"
	"go/types"
)

// A map keyed by pointers is ranged over in the order of its keys' stand-in
// addresses (rtgo.ByAddr), which the seed draws. Every place a key may enter
// such a map (an index, a key of a map literal) passes it through rtgo.Key,
// so that the addresses are drawn in program order.

// ptrKeyed reports whether t is a map whose key is a pointer.
func ptrKeyed(t types.Type) bool {
	if t == nil {
		return false
	}
	m, ok := t.Underlying().(*types.Map)
	if !ok {
		return false
	}
	_, ok = m.Key().Underlying().(*types.Pointer)
	return ok
}

// classifyPtrKey records the keys of pointer-keyed maps to pass through
// rtgo.Key.
func (tr *translator) classifyPtrKey(n ast.Node) {
	switch n := n.(type) {
	case *ast.IndexExpr:
		if ptrKeyed(tr.info.TypeOf(n.X)) {
			tr.ptrKey[n.Index] = true
		}
	case *ast.CompositeLit:
		if ptrKeyed(tr.info.TypeOf(n)) {
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					tr.ptrKey[kv.Key] = true
				}
			}
		}
	}
}

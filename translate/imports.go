package translate

import (
	"go/ast"
	"slices"
	"strconv"

	"golang.org/x/tools/go/ast/astutil"
)

// fixImports adds the seam's imports the rewrite needs and drops the ones it
// left unused (sync, runtime, often time and context).
func (tr *translator) fixImports() {
	if tr.usesRT {
		astutil.AddImport(tr.fset, tr.file, rtPath)
	}
	if tr.usesGo {
		astutil.AddImport(tr.fset, tr.file, rtgoPath)
	}
	for _, imp := range slices.Clone(tr.file.Imports) {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || path == "unsafe" {
			continue
		}
		if imp.Name != nil && (imp.Name.Name == "_" || imp.Name.Name == ".") {
			continue
		}
		name := lastElem(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if !tr.usesName(name) {
			if imp.Name != nil {
				astutil.DeleteNamedImport(tr.fset, tr.file, imp.Name.Name, path)
			} else {
				astutil.DeleteImport(tr.fset, tr.file, path)
			}
		}
	}
}

// usesName reports whether the file refers to name.X anywhere.
func (tr *translator) usesName(name string) bool {
	used := false
	ast.Inspect(tr.file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				used = true
			}
		}
		return !used
	})
	return used
}

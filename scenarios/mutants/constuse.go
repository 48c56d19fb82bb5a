package mutants

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A constant's mutant can be served by a schema build at the constant's one
// use (see schema.go). constantUse decides whether it can, and where. It
// refuses whenever it cannot be sure the two programs are the same:
//   - The edit must lie inside one const spec with one name and one value,
//     not written with iota.
//   - The constant must be referred to exactly once, from a function body
//     of its own package. That count is over the test binary of the
//     mutant's claim family (go list -deps -test). References are counted
//     by name, so a same-named local or field only adds to the count (a
//     refusal, never a wrong schema). A dot-import of the package refuses
//     outright.
//   - The mutated value's names (a package such as time, or a name of the
//     package) must mean the same at the use. The use's file imports the
//     same packages under the same names, and the using function declares
//     none of the names.
//
// The use is then replaced by the mutated value, parenthesized, converted
// to the constant's declared type if it has one, so that it is typed as
// the constant was.

// binaryFiles is every Go file of this module compiled into one claim
// family's test binary, parsed.
type binaryFiles struct {
	fset  *token.FileSet
	files map[string]*ast.File // absolute path -> syntax
	paths map[string]string    // absolute directory -> import path
	order []string             // the paths, in go list's order
}

// familyBinary lists and parses the module's files of pkg's test binary.
func familyBinary(root, pkg string) (*binaryFiles, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-deps", "-test", "-json=Dir,ImportPath,GoFiles,CgoFiles,Standard", pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps -test %s: %v: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	b := &binaryFiles{fset: token.NewFileSet(), files: map[string]*ast.File{}, paths: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir, ImportPath   string
			GoFiles, CgoFiles []string
			Standard          bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -deps -test %s: %v", pkg, err)
		}
		if p.Standard || (p.Dir != absRoot && !strings.HasPrefix(p.Dir, absRoot+string(filepath.Separator))) {
			continue // another module's files cannot refer to this one's constants
		}
		path, _, _ := strings.Cut(p.ImportPath, " ") // "p [p.test]" is p recompiled for its tests
		if _, ok := b.paths[p.Dir]; !ok || !strings.HasSuffix(path, "_test") {
			b.paths[p.Dir] = path
		}
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			file := name
			if !filepath.IsAbs(file) {
				file = filepath.Join(p.Dir, name)
			}
			if !strings.HasPrefix(file, absRoot+string(filepath.Separator)) {
				continue // generated (the test binary's main, in the build cache)
			}
			if _, ok := b.files[file]; ok {
				continue
			}
			f, err := parser.ParseFile(b.fset, file, nil, 0)
			if err != nil {
				return nil, err
			}
			b.files[file] = f
			b.order = append(b.order, file)
		}
	}
	return b, nil
}

// constantUse returns the site of m at its constant's one use, and false
// when m is not a constant's edit or cannot be served there (see above).
// binaries caches each family's files.
func constantUse(root string, m Mutant, binaries map[string]*binaryFiles) (site, bool, error) {
	srcBytes, err := os.ReadFile(filepath.Join(root, m.File))
	if err != nil {
		return site{}, false, err
	}
	src := string(srcBytes)
	if strings.Count(src, m.Old) != 1 || m.Pkg == "" {
		return site{}, false, nil // schematize reports a snippet that does not apply
	}
	at := strings.Index(src, m.Old)
	end := at + len(m.Old)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, m.File, src, 0)
	if err != nil {
		return site{}, false, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	if enclosingFunc(fset, f, at, end) != nil {
		return site{}, false, nil // an ordinary function mutant
	}
	spec := constSpec(f, off, at, end)
	if spec == nil {
		return site{}, false, nil
	}
	name := spec.Names[0].Name
	s0, s1 := off(spec.Pos()), off(spec.End())
	mutated := src[s0:at] + m.New + src[end:s1]
	typ, value, ok := parseConstSpec(name, mutated)
	if !ok {
		return site{}, false, nil
	}

	bin := binaries[m.Pkg]
	if bin == nil {
		if bin, err = familyBinary(root, m.Pkg); err != nil {
			return site{}, false, err
		}
		binaries[m.Pkg] = bin
	}
	constFile, err := filepath.Abs(filepath.Join(root, m.File))
	if err != nil {
		return site{}, false, err
	}
	if _, ok := bin.files[constFile]; !ok {
		return site{}, false, nil // not in the family's binary: nothing to check it with
	}
	constDir := filepath.Dir(constFile)
	constPath := bin.paths[constDir]
	var uses []*ast.Ident
	var useFile string
	for _, file := range bin.order {
		g := bin.files[file]
		if filepath.Dir(file) == constDir && g.Name.Name == f.Name.Name {
			for _, id := range bareRefs(g, name) {
				if file == constFile && bin.fset.Position(id.Pos()).Offset == off(spec.Names[0].Pos()) {
					continue // the declaration itself
				}
				uses = append(uses, id)
				useFile = file
			}
			continue
		}
		for _, imp := range g.Imports {
			if strings.Trim(imp.Path.Value, `"`) != constPath {
				continue
			}
			if imp.Name != nil && imp.Name.Name == "." {
				return site{}, false, nil
			}
			pkgName := f.Name.Name
			if imp.Name != nil {
				pkgName = imp.Name.Name
			}
			if n := qualifiedRefs(g, pkgName, name); n > 0 {
				return site{}, false, nil // used from another package: the value's names would not resolve there
			}
		}
	}
	if len(uses) != 1 {
		return site{}, false, nil
	}
	use := uses[0]
	useSrc, err := os.ReadFile(useFile)
	if err != nil {
		return site{}, false, err
	}
	ufset := token.NewFileSet()
	uf, err := parser.ParseFile(ufset, useFile, useSrc, 0)
	if err != nil {
		return site{}, false, err
	}
	uat, uend := bin.fset.Position(use.Pos()).Offset, bin.fset.Position(use.End()).Offset
	fd := enclosingFunc(ufset, uf, uat, uend)
	if fd == nil {
		return site{}, false, nil // a package-level initializer, not a function
	}
	valueNames := exprNames(typ, value)
	if !sameImports(f, uf, valueNames) || declaresAny(fd, valueNames) {
		return site{}, false, nil
	}
	text := "(" + value + ")"
	if typ != "" {
		text = typ + text
	}
	rel, err := filepath.Rel(mustAbs(root), useFile)
	if err != nil {
		return site{}, false, err
	}
	return site{m: m, useFile: rel, at: uat, end: uend, text: text}, true, nil
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// constSpec is the const spec of one name and one value, not written with
// iota, whose text holds [at, end), or nil.
func constSpec(f *ast.File, off func(token.Pos) int, at, end int) *ast.ValueSpec {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if at < off(vs.Pos()) || end > off(vs.End()) {
				continue
			}
			if len(vs.Names) != 1 || len(vs.Values) != 1 || mentions(vs.Values[0], "iota") {
				return nil
			}
			return vs
		}
	}
	return nil
}

// parseConstSpec reads "Name [Type] = value" back: the type's and the
// value's text, and whether it is still one constant of that name.
func parseConstSpec(name, spec string) (typ, value string, ok bool) {
	src := "package p\n\nconst " + spec + "\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "spec.go", src, 0)
	if err != nil || len(f.Decls) != 1 {
		return "", "", false
	}
	gd, isGen := f.Decls[0].(*ast.GenDecl)
	if !isGen || len(gd.Specs) != 1 {
		return "", "", false
	}
	vs := gd.Specs[0].(*ast.ValueSpec)
	if len(vs.Names) != 1 || vs.Names[0].Name != name || len(vs.Values) != 1 || mentions(vs.Values[0], "iota") {
		return "", "", false
	}
	text := func(n ast.Node) string {
		return src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset]
	}
	if vs.Type != nil {
		typ = text(vs.Type)
	}
	return typ, text(vs.Values[0]), true
}

func mentions(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// bareRefs is every identifier spelled name in f that is not the selected
// name of a selector (x.name).
func bareRefs(f *ast.File, name string) []*ast.Ident {
	sel := map[*ast.Ident]bool{}
	var out []*ast.Ident
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			sel[n.Sel] = true
		case *ast.Ident:
			if n.Name == name && !sel[n] {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}

// qualifiedRefs counts pkg.name in f.
func qualifiedRefs(f *ast.File, pkg, name string) int {
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if s, ok := node.(*ast.SelectorExpr); ok && s.Sel.Name == name {
			if x, ok := s.X.(*ast.Ident); ok && x.Name == pkg {
				n++
			}
		}
		return true
	})
	return n
}

// exprNames is every identifier of the type and the value (package names
// of selectors included; the selected names are not free).
func exprNames(typ, value string) map[string]bool {
	names := map[string]bool{}
	for _, text := range []string{typ, value} {
		if text == "" {
			continue
		}
		e, err := parser.ParseExpr(text)
		if err != nil {
			names["\x00unparsed"] = true // no Go name: declaresAny cannot clear it
			continue
		}
		sel := map[*ast.Ident]bool{}
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				sel[n.Sel] = true
			case *ast.Ident:
				if !sel[n] {
					names[n.Name] = true
				}
			}
			return true
		})
	}
	return names
}

// sameImports says whether every name that the constant's file imports and
// the value uses is imported the same way by the use's file.
func sameImports(constFile, useFile *ast.File, names map[string]bool) bool {
	if names["\x00unparsed"] {
		return false
	}
	imported := func(f *ast.File) map[string]string {
		m := map[string]string{}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			m[name] = path
		}
		return m
	}
	from, at := imported(constFile), imported(useFile)
	for n := range names { //windtunnel:unordered a yes/no over all names
		if p, ok := from[n]; ok && at[n] != p {
			return false
		}
		if _, ok := from[n]; !ok {
			if _, shadow := at[n]; shadow {
				return false // an import of the use's file hides a name of the package
			}
		}
	}
	return true
}

// declaresAny says whether fd declares any of names anywhere (receiver,
// parameters, results, :=, var, const, type, range, function literals):
// such a declaration could give a name of the value another meaning at the
// use. Over-approximate: a declaration in a scope that does not reach the
// use still refuses.
func declaresAny(fd *ast.FuncDecl, names map[string]bool) bool {
	found := false
	hit := func(id *ast.Ident) {
		if id != nil && names[id.Name] {
			found = true
		}
	}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fld := range fl.List {
			for _, id := range fld.Names {
				hit(id)
			}
		}
	}
	fields(fd.Recv)
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			fields(n.TypeParams)
			fields(n.Params)
			fields(n.Results)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						hit(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				if id, ok := n.Key.(*ast.Ident); ok {
					hit(id)
				}
				if id, ok := n.Value.(*ast.Ident); ok {
					hit(id)
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				hit(id)
			}
		case *ast.TypeSpec:
			hit(n.Name)
		case *ast.TypeSwitchStmt:
			if a, ok := n.Assign.(*ast.AssignStmt); ok {
				for _, l := range a.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						hit(id)
					}
				}
			}
		}
		return !found
	})
	return found
}

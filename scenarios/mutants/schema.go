package mutants

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/windtunnel/windtunnel/sim/simtest"
)

// Mutant schemata: instead of one build per mutant, every mutant that edits
// the body of one function is compiled into the same overlay, each behind a
// switch read at run time (WINDTUNNEL_MUTANT=<id>), so one test binary per
// claim family serves all of them. The switch exists only in the overlay:
// production files carry no hook.
//
// For a mutant whose edit stays inside one function, the schema keeps the
// original function and appends a copy with the edit applied, renamed, and
// puts a dispatch at the top of the original:
//
//	func (c *Cache) load(ctx context.Context, k key) (bool, error) {
//		if wtMutant == "ms-lock-kept-on-cancel" {
//			return c.load__wt3(ctx, k)
//		}
//		... the original body ...
//	}
//	func (c *Cache) load__wt3(ctx context.Context, k key) (bool, error) { ... the mutated body ... }
//
// A mutant that edits a constant's value is schematized at the constant's
// one use. It takes a constant referred to exactly once, inside a function
// body, in the test binary of the mutant's claim family. That reference is
// replaced by the mutated value in the function's copy, which is the same
// program as the edited constant (a constant is seen only through its
// references). The constant itself stays as it is, so every other binary
// built with the overlay compiles and behaves as before. A constant referred
// to twice (the collector's ChunkPoints) or from another constant (the cop's
// DefaultTick is the timer wheel's) is not.
//
// A mutant that edits anything else (a type, two functions) is not
// schematized: it keeps a build of its own (Schema.Separate).

// MutantEnv is the variable that selects a mutant in a schema build. It is
// the one simtest reads to know a run flies a mutant.
const MutantEnv = simtest.MutantEnv

// Schema is the combined overlay.
type Schema struct {
	Overlay  string          // the overlay file to build with
	In       map[string]bool // mutant IDs the schema serves
	Separate []Mutant        // mutants that need a build of their own
}

// BuildSchema writes the combined overlay of ms under dir. Mutants it
// cannot schematize are returned in Separate, with the reason in the error
// list only when the mutant itself is broken (its snippet does not apply).
func BuildSchema(root, dir string, ms []Mutant) (Schema, error) {
	return buildSchema(root, dir, ms, false)
}

// BuildRaceSchema writes the combined overlay of the Race mutants of ms
// under dir, for test binaries built with the race detector (one per
// claim family, instead of one per Race mutant); the other mutants are
// left out of it, not returned in Separate.
func BuildRaceSchema(root, dir string, ms []Mutant) (Schema, error) {
	return buildSchema(root, dir, ms, true)
}

func buildSchema(root, dir string, ms []Mutant, race bool) (Schema, error) {
	sc := Schema{In: map[string]bool{}}
	byFile := map[string][]site{}
	var files []string
	binaries := map[string]*binaryFiles{} // claim family package -> its test binary's files
	for _, m := range ms {
		switch {
		case m.Race && !race: // a -race build: the race schema's, or one of its own
			sc.Separate = append(sc.Separate, m)
			continue
		case !m.Race && race:
			continue
		}
		st := site{m: m, at: -1}
		if moved, ok, err := constantUse(root, m, binaries); err != nil {
			return sc, err
		} else if ok {
			st = moved
		}
		if _, ok := byFile[st.file()]; !ok {
			files = append(files, st.file())
		}
		byFile[st.file()] = append(byFile[st.file()], st)
	}
	sort.Strings(files)
	src := filepath.Join(dir, "_schema")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return sc, err
	}
	replace := map[string]string{}
	pkgDirs := map[string]string{} // package directory -> package name
	for fi, file := range files {
		orig, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return sc, err
		}
		out, in, rest, pkgName, err := schematizeSites(string(orig), byFile[file], fi)
		if err != nil {
			return sc, fmt.Errorf("schema of %s: %w", file, err)
		}
		sc.Separate = append(sc.Separate, rest...)
		if len(in) == 0 {
			continue
		}
		for _, m := range in {
			sc.In[m.ID] = true
		}
		dst := filepath.Join(src, fmt.Sprintf("%03d_%s", fi, filepath.Base(file)))
		if err := os.WriteFile(dst, []byte(out), 0o644); err != nil {
			return sc, err
		}
		abs, err := filepath.Abs(filepath.Join(root, file))
		if err != nil {
			return sc, err
		}
		absDst, err := filepath.Abs(dst)
		if err != nil {
			return sc, err
		}
		replace[abs] = absDst
		pkgDirs[filepath.Dir(abs)] = pkgName
	}
	// The switch: one variable per mutated package, in a file of its own.
	var dirs []string
	for d := range pkgDirs { //windtunnel:unordered sorted below
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	fs, err := faultSwitchImport(root)
	if err != nil {
		return sc, err
	}
	for i, d := range dirs {
		dst, err := filepath.Abs(filepath.Join(src, fmt.Sprintf("switch_%03d.go", i)))
		if err != nil {
			return sc, err
		}
		if err := os.WriteFile(dst, []byte(switchFile(pkgDirs[d], fs)), 0o644); err != nil {
			return sc, err
		}
		replace[filepath.Join(d, "zz_windtunnel_mutant_switch.go")] = dst
	}
	js, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return sc, err
	}
	sc.Overlay = filepath.Join(dir, "schema-overlay.json")
	return sc, os.WriteFile(sc.Overlay, js, 0o644)
}

// switchFile is the source of a mutated package's switch: wtMutant, read
// from MutantEnv, and, when the module has the faultswitch package (its
// import path fs), the switch registered there, so that a shrinker in the
// test binary can run the code without the mutant (a counterexample must
// pass there).
func switchFile(pkg, fs string) string {
	if fs == "" {
		return fmt.Sprintf("package %s\n\nimport \"os\"\n\n// wtMutant selects the mutant a schema build runs (windtunnel mutant schemata).\nvar wtMutant = os.Getenv(%q)\n", pkg, MutantEnv)
	}
	return fmt.Sprintf(`package %s

import (
	"os"

	wtfaultswitch %q
)

// wtMutant selects the mutant a schema build runs (windtunnel mutant schemata).
var wtMutant = os.Getenv(%q)

// The selected mutant can be switched off, for a shrinker's control runs.
func init() {
	if m := wtMutant; m != "" {
		wtfaultswitch.Register(func(on bool) {
			if on {
				wtMutant = m
			} else {
				wtMutant = ""
			}
		})
	}
}
`, pkg, fs, MutantEnv)
}

// faultSwitchImport is the import path of root's faultswitch package
// (sim/faultswitch under the module root), or "" when root has none (a
// scratch module of the tests).
func faultSwitchImport(root string) (string, error) {
	if _, err := os.Stat(filepath.Join(root, "sim", "faultswitch", "faultswitch.go")); err != nil {
		return "", nil
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) + "/sim/faultswitch", nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// edit is a text insertion or replacement at an offset of the original.
type edit struct {
	at, end int
	text    string
}

// site is where a mutant's edit lands in the schema: its own snippet in
// its own file (at < 0), or, for a constant's mutant, the constant's one
// use (constantUse): the bytes [at, end) of useFile become text.
type site struct {
	m       Mutant
	useFile string
	at, end int
	text    string
}

func (s site) file() string {
	if s.at >= 0 {
		return s.useFile
	}
	return s.m.File
}

// schematize rewrites one file: the mutants it can serve with a switch
// (in), the ones it cannot (rest).
func schematize(orig string, ms []Mutant, fileIndex int) (out string, in, rest []Mutant, pkg string, err error) {
	sites := make([]site, len(ms))
	for i, m := range ms {
		sites[i] = site{m: m, at: -1}
	}
	return schematizeSites(orig, sites, fileIndex)
}

func schematizeSites(orig string, sites []site, fileIndex int) (out string, in, rest []Mutant, pkg string, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "orig.go", orig, parser.ParseComments)
	if err != nil {
		return "", nil, nil, "", err
	}
	pkg = f.Name.Name
	var edits []edit
	var appended []string
	named := map[*ast.FuncDecl]bool{}
	for mi, st := range sites {
		m := st.m
		at, end, repl := st.at, st.end, st.text
		if at < 0 {
			if strings.Count(orig, m.Old) != 1 {
				return "", nil, nil, "", fmt.Errorf("mutant %s: its snippet occurs %d times", m.ID, strings.Count(orig, m.Old))
			}
			at = strings.Index(orig, m.Old)
			end, repl = at+len(m.Old), m.New
		}
		fd := enclosingFunc(fset, f, at, end)
		if fd == nil {
			rest = append(rest, m)
			continue
		}
		// The mutated copy: the function's text with the edit applied,
		// renamed.
		start, fend := fset.Position(fd.Pos()).Offset, fset.Position(fd.End()).Offset
		text := orig[start:fend]
		rel := at - start
		mutated := text[:rel] + repl + text[rel+(end-at):]
		nameOff := fset.Position(fd.Name.Pos()).Offset - start
		copyName := fmt.Sprintf("%s__wt%d_%d", fd.Name.Name, fileIndex, mi)
		mutated = mutated[:nameOff] + copyName + mutated[nameOff+len(fd.Name.Name):]
		// Drop the doc comment from the copy; it is the original's.
		appended = append(appended, "\n// "+copyName+" is mutant "+m.ID+" of "+fd.Name.Name+" (a schema build's copy).\n"+mutated+"\n")
		// Name every parameter of the original so the dispatch can pass it.
		if !named[fd] {
			named[fd] = true
			edits = append(edits, nameParams(fset, fd)...)
		}
		call := dispatchCall(fd, copyName)
		var stmt string
		if fd.Type.Results == nil || len(fd.Type.Results.List) == 0 {
			stmt = fmt.Sprintf("\n\tif wtMutant == %q {\n\t\t%s\n\t\treturn\n\t}\n", m.ID, call)
		} else {
			stmt = fmt.Sprintf("\n\tif wtMutant == %q {\n\t\treturn %s\n\t}\n", m.ID, call)
		}
		lbrace := fset.Position(fd.Body.Lbrace).Offset + 1
		edits = append(edits, edit{at: lbrace, end: lbrace, text: stmt})
		in = append(in, m)
	}
	// Apply the edits back to front.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out = orig
	for _, e := range edits {
		out = out[:e.at] + e.text + out[e.end:]
	}
	return out + strings.Join(appended, ""), in, rest, pkg, nil
}

// enclosingFunc is the top-level function whose body holds [from, to), or
// nil.
func enclosingFunc(fset *token.FileSet, f *ast.File, from, to int) *ast.FuncDecl {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		b0, b1 := fset.Position(fd.Body.Lbrace).Offset+1, fset.Position(fd.Body.Rbrace).Offset
		if from >= b0 && to <= b1 {
			return fd
		}
	}
	return nil
}

// nameParams names the receiver and every parameter that has no usable
// name (none, or _) in the original function.
func nameParams(fset *token.FileSet, fd *ast.FuncDecl) []edit {
	var edits []edit
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	fix := func(fl *ast.FieldList, prefix string) {
		if fl == nil {
			return
		}
		for i, field := range fl.List {
			if len(field.Names) == 0 {
				edits = append(edits, edit{at: off(field.Type.Pos()), end: off(field.Type.Pos()), text: fmt.Sprintf("%s%d ", prefix, i)})
				continue
			}
			for j, n := range field.Names {
				if n.Name == "_" {
					edits = append(edits, edit{at: off(n.Pos()), end: off(n.End()), text: fmt.Sprintf("%s%d_%d", prefix, i, j)})
				}
			}
		}
	}
	fix(fd.Recv, "wtR")
	fix(fd.Type.Params, "wtP")
	return edits
}

// dispatchCall is the call of the mutated copy with the original's
// receiver, type parameters and parameters.
func dispatchCall(fd *ast.FuncDecl, copyName string) string {
	names := func(fl *ast.FieldList, prefix string) []string {
		var out []string
		if fl == nil {
			return out
		}
		for i, field := range fl.List {
			if len(field.Names) == 0 {
				out = append(out, fmt.Sprintf("%s%d", prefix, i))
				continue
			}
			for j, n := range field.Names {
				if n.Name == "_" {
					out = append(out, fmt.Sprintf("%s%d_%d", prefix, i, j))
				} else {
					out = append(out, n.Name)
				}
			}
		}
		return out
	}
	args := names(fd.Type.Params, "wtP")
	if n := len(fd.Type.Params.List); n > 0 {
		if _, variadic := fd.Type.Params.List[n-1].Type.(*ast.Ellipsis); variadic {
			args[len(args)-1] += "..."
		}
	}
	callee := copyName
	if fd.Recv != nil {
		callee = names(fd.Recv, "wtR")[0] + "." + copyName
	} else if fd.Type.TypeParams != nil {
		callee += "[" + strings.Join(names(fd.Type.TypeParams, "wtT"), ", ") + "]"
	}
	return callee + "(" + strings.Join(args, ", ") + ")"
}

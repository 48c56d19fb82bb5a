// Command wttranslate rewrites a Go package onto windtunnel's runtime seam
// (see package translate): go run ./translate/cmd/wttranslate SRC OUT.
// Files with constructs it cannot take are listed with file:line and not
// written; it then exits with status 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/windtunnel/windtunnel/translate"
)

func main() {
	pkg := flag.String("pkg", "", "rename the package clause (a package main becomes importable)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: wttranslate [-pkg name] SRC OUT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(flag.Arg(0), flag.Arg(1), *pkg))
}

func run(src, out, pkg string) int {
	files, err := translate.Dir(src, translate.Options{Package: pkg})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	status, written := 0, 0
	for _, f := range files {
		for _, is := range f.Issues {
			fmt.Printf("%s: cannot translate: %s\n", is.Pos, is.Construct)
			status = 1
		}
		if f.Src == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(out, f.Name), f.Src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		written++
	}
	fmt.Printf("%d of %d files translated into %s\n", written, len(files), out)
	return status
}

package simtest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/determinism"
)

// The determinism scan of the test's own code, made once per test process
// (go test runs a package's test binary in the package's directory) and
// reported by every simulation test that asks for it.
var (
	scanOnce     sync.Once
	scanFindings []string
	scanErr      error
)

// windtunnelRoot is windtunnel's module path, read off the sim package.
var windtunnelRoot = strings.TrimSuffix(reflect.TypeFor[sim.Sim]().PkgPath(), "/sim")

// seamPackages are windtunnel's own packages that run real goroutines on
// purpose: the simulator and the real side of the rt seam. The scan skips
// them and, among imports, everything below them.
var seamPackages = []string{windtunnelRoot + "/sim", windtunnelRoot + "/sim/simtest", windtunnelRoot + "/sim/determinism",
	windtunnelRoot + "/impl/rt", windtunnelRoot + "/impl/edge",
	// and the audit, which runs go test as processes and times them
	windtunnelRoot + "/scenarios/audit", windtunnelRoot + "/scenarios/cmd"}

// scanPackage fails t with the determinism scan's findings on the test's
// package, unless -sim.scan=false.
func scanPackage(t *testing.T, st settings) {
	t.Helper()
	if _, inModule := modulePackage(); !st.scan || !inModule {
		// A test binary run outside its module has no sources to scan.
		return
	}
	scanOnce.Do(func() { scanFindings, scanErr = scanTestPackage(".") })
	if scanErr != nil {
		t.Fatalf("windtunnel: the determinism scan of this package could not run (-sim.scan=false skips it): %v", scanErr)
	}
	if len(scanFindings) > 0 {
		t.Fatalf("windtunnel: this package's code breaks the determinism contract, which every simulated task must keep (see sim/determinism; -sim.scan=false skips the scan):\n  %s",
			strings.Join(scanFindings, "\n  "))
	}
}

// scanTestPackage scans the package in dir and the packages of its module
// that its non-test files import, outside windtunnel's own simulator and
// seam, non-test files only. A world or workload imported by the package
// runs in its tasks. Going further (every dependency, the test files'
// imports) costs seconds per package and reaches code no task runs.
func scanTestPackage(dir string) ([]string, error) {
	// Not the test files' imports: those include checkers that run after
	// the run, outside every task (checks' wall-clock budget, say).
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedModule, Dir: dir}, ".")
	if err != nil {
		return nil, err
	}
	var targets []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors[0])
		}
		if !seen[p.PkgPath] && scanned(p.PkgPath, p.Module, false) {
			seen[p.PkgPath] = true
			targets = append(targets, p.PkgPath)
		}
		for path := range p.Imports { //windtunnel:unordered the scan reports in its own package order
			if !seen[path] && scanned(path, p.Module, true) {
				seen[path] = true
				targets = append(targets, path)
			}
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	vs, err := determinism.Scan(dir, determinism.Rules{}, targets...)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out, nil
}

// scanned says whether the scan covers the package path: in the test's
// module, and not windtunnel's simulator or seam (with below, everything
// under them: an example of the simulator's own is scanned as a test's
// package, not as an import).
func scanned(path string, mod *packages.Module, below bool) bool {
	if mod == nil || (path != mod.Path && !strings.HasPrefix(path, mod.Path+"/")) {
		return false
	}
	for _, own := range seamPackages {
		if path == own || (below && strings.HasPrefix(path, own+"/")) {
			return false
		}
	}
	return true
}

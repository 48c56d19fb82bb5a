// This test enforces the determinism contract (../shared/DESIGN.md) with
// the reusable scan of sim/determinism on everything a simulated task
// runs:
//
//   - impl/ with the production rules, outside impl/rt and impl/edge (the
//     real world's side of the seam). Non-test files only: impl's own tests
//     may run real goroutines against rt.Real().
//   - model/ (the specifications and baselines the worlds run), and the
//     simulated database and bus (sim/simdb, sim/simbus).
//   - Everything under scenarios/ (worlds, claim checks, claims, mutants)
//     with their test files. Outside are scenarios/audit and scenarios/cmd,
//     which run go test as processes and time them.
package impl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/windtunnel/windtunnel/sim/determinism"
)

const module = "github.com/windtunnel/windtunnel"

// TestDeterminismContract fails on any violation in the real code.
func TestDeterminismContract(t *testing.T) {
	impl, err := determinism.Scan("..", determinism.Rules{Impl: true, Module: module,
		Exclude: []string{module + "/impl/rt", module + "/impl/edge"}}, "./impl/...")
	if err != nil {
		t.Fatal(err)
	}
	var world []string
	for _, dir := range []string{"model", "sim/simdb", "sim/simbus", "scenarios"} {
		if _, err := os.Stat(filepath.Join("..", dir)); err == nil {
			world = append(world, "./"+dir+"/...")
		}
	}
	worlds, err := determinism.Scan("..", determinism.Rules{Tests: true,
		Exclude: []string{module + "/scenarios/audit", module + "/scenarios/cmd"}}, world...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(impl, worlds...) {
		t.Errorf("%v", v)
	}
}

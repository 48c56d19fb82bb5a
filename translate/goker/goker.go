// Package goker flies GoKer, the 63 blocking-bug kernels of GoBench (Yuan
// et al., CGO 2021) that ship with Go under
// src/runtime/testdata/testgoroutineleakprofile/goker. They are read from
// the Go installation at test time, translated without edits into a
// temporary module, and each kernel is flown as its own simtest test whose
// check is the simulator's leak oracle (see docs/goker.md).
package goker

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/windtunnel/windtunnel/translate"
)

// Kernel is one GoKer kernel.
type Kernel struct {
	Name      string // as registered: "Cockroach1055"
	File      string // cockroach1055.go
	Published string // the header's "Flaky: k/100" rate, "" when it has none
	Issues    []translate.Issue
}

// Dir is the GoKer directory of the Go installation that runs the tests.
func Dir() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("goker: go env GOROOT: %w", err)
	}
	d := filepath.Join(strings.TrimSpace(string(out)), "src", "runtime", "testdata", "testgoroutineleakprofile", "goker")
	if _, err := os.Stat(filepath.Join(d, "main.go")); err != nil {
		return "", fmt.Errorf("goker: no GoKer kernels in this Go installation: %w", err)
	}
	return d, nil
}

var (
	registerRE = regexp.MustCompile(`register\("([A-Za-z0-9_]+)"`)
	flakyRE    = regexp.MustCompile(`Flaky:\s*(\d+/\d+)`)
)

// Kernels lists the kernels of dir, sorted by name.
func Kernels(dir string) ([]Kernel, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ks []Kernel
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || n == "main.go" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		m := registerRE.FindSubmatch(src)
		if m == nil {
			return nil, fmt.Errorf("goker: %s registers no kernel", n)
		}
		k := Kernel{Name: string(m[1]), File: n}
		if f := flakyRE.FindSubmatch(src); f != nil {
			k.Published = string(f[1])
		}
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
	return ks, nil
}

// Prepare translates the kernels of src into out as package goker (files it
// cannot take are left out; their kernels carry the Issues), and makes out a
// module that uses this repository's (root) packages, with the harness test.
func Prepare(src, out, root string) ([]Kernel, error) {
	ks, err := Kernels(src)
	if err != nil {
		return nil, err
	}
	files, err := translate.Dir(src, translate.Options{Package: "goker"})
	if err != nil {
		return nil, err
	}
	byFile := map[string]*Kernel{}
	for i := range ks {
		byFile[ks[i].File] = &ks[i]
	}
	for _, f := range files {
		if f.Src == nil {
			if k := byFile[f.Name]; k != nil {
				k.Issues = f.Issues
				continue
			}
			return nil, fmt.Errorf("goker: %s does not translate: %v", f.Name, f.Issues)
		}
		if err := os.WriteFile(filepath.Join(out, f.Name), f.Src, 0o644); err != nil {
			return nil, err
		}
	}
	mod := fmt.Sprintf("module gokerrun\n\ngo 1.26\n\nrequire github.com/windtunnel/windtunnel v0.0.0\n\nreplace github.com/windtunnel/windtunnel => %s\n", root)
	if err := os.WriteFile(filepath.Join(out, "go.mod"), []byte(mod), 0o644); err != nil {
		return nil, err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "go.sum"), sum, 0o644); err != nil {
		return nil, err
	}
	return ks, os.WriteFile(filepath.Join(out, "harness_test.go"), []byte(harness), 0o644)
}

// Definite reports whether a failure message is a leak the oracle proved:
// every task left could not move ("blocked forever") or the kernel itself
// deadlocked, rather than tasks still blocked when the settle phase was cut
// off while others kept running (a possible leak).
func Definite(msg string) bool {
	return strings.Contains(msg, "blocked forever") || strings.HasPrefix(msg, "deadlock")
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// harness is the test file Prepare writes beside the translated kernels:
// each registered kernel is a subtest flown by simtest, with the leak
// oracle on, seeds one after another (rtgo binds one run at a time). With
// GOKER_RESULTS set it writes one JSON line per kernel: every seed and the
// first line of its failure ("" when it passed), for Rates to classify.
const harness = `package goker

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt/rtgo"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

func TestKernels(t *testing.T) {
	var names []string
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var out *os.File
	if p := os.Getenv("GOKER_RESULTS"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	cfg, err := budget()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res := simtest.Seeds(t, simtest.Options{Seeds: 1000, Sequential: true, Config: cfg}, func(s *sim.Sim) (struct{}, error) {
				rtgo.Use(s)
				cmds[name]()
				return struct{}{}, nil
			})
			if out == nil {
				return
			}
			line := struct {
				Kernel   string   ` + "`json:\"kernel\"`" + `
				Seeds    []string ` + "`json:\"seeds\"`" + `
				Failures []string ` + "`json:\"failures\"`" + `
			}{Kernel: name}
			for _, r := range res.Runs {
				first, _, _ := strings.Cut(r.Failure, "\n")
				line.Seeds = append(line.Seeds, fmt.Sprintf("%#x", r.Seed))
				line.Failures = append(line.Failures, first)
			}
			b, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		})
	}
}

// budget is a run's configuration: GOKER_STEPS bounds its steps (5,000,000
// by default) and GOKER_SETTLE the settle phase after the kernel returns (1s
// by default, and as many steps as microseconds, the time a step takes).
func budget() (sim.Config, error) {
	steps, settle := int64(5_000_000), time.Second
	if v := os.Getenv("GOKER_STEPS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return sim.Config{}, fmt.Errorf("GOKER_STEPS=%q: want a positive number of steps", v)
		}
		steps = n
	}
	if v := os.Getenv("GOKER_SETTLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Microsecond {
			return sim.Config{}, fmt.Errorf("GOKER_SETTLE=%q: want a duration of at least 1µs", v)
		}
		settle = d
	}
	return sim.Config{LeakCheck: true, LeakSettle: settle, LeakSettleSteps: int64(settle / time.Microsecond),
		MaxSteps: steps, StepDuration: time.Microsecond, IdleWake: time.Millisecond}, nil
}
`

// Replay runs one seed of one kernel again, verbosely (its failure report,
// blocked tasks and trace tail), and reports whether it failed again. With
// shrink, simtest shrinks the failing run too (its schedule: a kernel has no
// operations to drop) and prints the shrunk run's interleaving and replay.
func Replay(dir, kernel, strategy, seed string, shrink bool) (string, bool, error) {
	args := []string{"test", "-vet=off", "-count=1", "-run", "^TestKernels$/^" + kernel + "$",
		"-sim.seed=" + seed, "-sim.strategy=" + strategy, "-sim.record=false", "-v", "."}
	if shrink {
		args = append(args[:len(args)-1], "-sim.shrink", ".")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		return string(out), false, err
	}
	return string(out), err != nil && strings.Contains(string(out), "windtunnel failure"), nil
}

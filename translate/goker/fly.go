package goker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Build compiles the harness of dir (from Prepare) once into a test binary,
// which every run of the set then executes.
func Build(dir string) (string, error) {
	exe := filepath.Join(dir, "kernels.test")
	cmd := exec.Command("go", "test", "-vet=off", "-c", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = moduleEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("goker: building the harness: %v\n%s", err, tail(string(out), 40))
	}
	return exe, nil
}

func moduleEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
}

// Budget bounds each run of a flight: its steps (GOKER_STEPS) and the
// settle phase after the kernel returns (GOKER_SETTLE). A zero field leaves
// that bound to the environment, and so to the harness's default.
type Budget struct {
	Steps  int64
	Settle time.Duration
}

// env is the harness binary's environment for flying within b.
func (b Budget) env() []string {
	e := moduleEnv()
	if b.Steps > 0 {
		e = append(e, fmt.Sprintf("GOKER_STEPS=%d", b.Steps))
	}
	if b.Settle > 0 {
		e = append(e, "GOKER_SETTLE="+b.Settle.String())
	}
	return e
}

// String says b in a table cell: "at 2000000000 steps, 1h0m0s settling".
func (b Budget) String() string {
	var parts []string
	if b.Steps > 0 {
		parts = append(parts, fmt.Sprintf("%d steps", b.Steps))
	}
	if b.Settle > 0 {
		parts = append(parts, fmt.Sprintf("%v settling", b.Settle))
	}
	if len(parts) == 0 {
		return "at the default budget"
	}
	return "at " + strings.Join(parts, ", ")
}

// args is what a make command adds to fly within b: b's own bounds, and
// for the others the environment's when they are not the defaults.
func (b Budget) args() string {
	var s strings.Builder
	if b.Steps > 0 {
		fmt.Fprintf(&s, " GOKER_STEPS=%d", b.Steps)
	} else if v := os.Getenv("GOKER_STEPS"); v != "" && v != "5000000" {
		s.WriteString(" GOKER_STEPS=" + v)
	}
	if b.Settle > 0 {
		s.WriteString(" GOKER_SETTLE=" + b.Settle.String())
	} else if v := os.Getenv("GOKER_SETTLE"); v != "" && v != "1s" {
		s.WriteString(" GOKER_SETTLE=" + v)
	}
	return s.String()
}

// Rate is one kernel's seeds under one strategy: how many proved the leak.
type Rate struct {
	Kernel   string
	Strategy string
	Seeds    int // seeds run
	Leaks    int // seeds whose run proved a leak (Definite)
	Leaked   int // tasks those runs left blocked forever, summed
	// Uncounted is the proved leaks whose message names no count (a
	// deadlock while main waits): Leaked leaves them out.
	Uncounted int
	Possible  int    // runs cut off with tasks still blocked while others ran
	Limits    int    // other failures: the step or task limit
	First     int    // 1-based seed of the first proved leak, 0 when none
	Seed      string // that seed
	Message   string // its failure's first line
	Other     string // the first failure that proved nothing, its first line
	CutOff    bool   // the wall limit stopped the run before it reported
	Budget    Budget // what bounded each run; zero: the environment's
}

// classify counts the seeds of one harness line by what their failures
// prove.
func classify(kernel, strategy string, seeds, failures []string) Rate {
	r := Rate{Kernel: kernel, Strategy: strategy, Seeds: len(seeds)}
	for i, f := range failures {
		switch {
		case f == "":
			continue
		case Definite(f):
			r.Leaks++
			if n := leakedTasks(f); n > 0 {
				r.Leaked += n
			} else {
				r.Uncounted++
			}
			if r.First == 0 {
				r.First, r.Seed, r.Message = i+1, seeds[i], f
			}
			continue
		case strings.Contains(f, "still blocked"):
			r.Possible++
		default:
			r.Limits++
		}
		if r.Other == "" {
			r.Other = f
		}
	}
	return r
}

var leakedRE = regexp.MustCompile(`(\d+) task\(s\) blocked forever`)

// leakedTasks is how many tasks a proved leak's message names, 0 when it
// names none (a deadlock while main waits).
func leakedTasks(msg string) int {
	m := leakedRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// FlyRate runs kernel under strategy on n seeds, every one of them (not
// stopping at the first failure), each within b, and counts the seeds that
// proved its leak. The run is stopped after wall; its Rate then says
// CutOff.
func FlyRate(exe, dir, kernel, strategy string, n int, wall time.Duration, b Budget) (Rate, error) {
	name := kernel + "-" + strategy
	if b != (Budget{}) {
		name += fmt.Sprintf("-%dsteps-%v", b.Steps, b.Settle)
	}
	res := filepath.Join(dir, "rates", name+".jsonl")
	if err := os.MkdirAll(filepath.Dir(res), 0o755); err != nil {
		return Rate{}, err
	}
	os.Remove(res)
	ctx, cancel := context.WithTimeout(context.Background(), wall)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run", "^TestKernels$/^"+kernel+"$", "-test.timeout=0",
		fmt.Sprintf("-sim.seeds=%d", n), "-sim.strategy="+strategy, "-sim.keepgoing",
		"-sim.record=false", "-sim.artifacts=false", "-sim.scan=false")
	cmd.Dir = dir
	cmd.Env = append(b.env(), "GOKER_RESULTS="+res)
	log, err := os.Create(strings.TrimSuffix(res, ".jsonl") + ".log")
	if err != nil {
		return Rate{}, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return Rate{Kernel: kernel, Strategy: strategy, CutOff: true, Budget: b}, nil
	}
	f, err := os.Open(res)
	if err != nil {
		return Rate{}, fmt.Errorf("goker: %s under %s wrote no result (go test said %v; see %s)", kernel, strategy, runErr, log.Name())
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Kernel   string   `json:"kernel"`
			Seeds    []string `json:"seeds"`
			Failures []string `json:"failures"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return Rate{}, fmt.Errorf("goker: %s: %v", res, err)
		}
		if line.Kernel == kernel && len(line.Seeds) == len(line.Failures) {
			r := classify(kernel, strategy, line.Seeds, line.Failures)
			r.Budget = b
			return r, nil
		}
	}
	if sc.Err() != nil {
		return Rate{}, fmt.Errorf("goker: %s: %v", res, sc.Err())
	}
	text, _ := os.ReadFile(log.Name())
	return Rate{}, fmt.Errorf("goker: %s under %s wrote no result (go test said %v); the end of %s:\n%s", kernel, strategy, runErr, log.Name(), tail(strings.TrimSpace(string(text)), 6))
}

// Shrunk is the shrink of one found seed and the check of its replay.
type Shrunk struct {
	Strategy, Seed string
	// Before and After are the preemptions of the seed's run and of the
	// shrunk one.
	Before, After int64
	Attempts      int
	Stopped       string // why the shrink stopped early, "" when it ran its passes
	Replay        string // the shrunk run's replay file
	// Failure is the first line of the shrunk replay's failure when run
	// again from Replay; Reproduces says it proved the leak again.
	Failure    string
	Reproduces bool
}

// ShrinkSeed shrinks kernel's failing seed (at most attempts re-runs and
// wall time), each run within b, then runs the shrunk replay file again
// and reports whether it still proves the leak. runWall is what the seed's
// own runs may take besides: a calibration run for PCT, the seed, and its
// recorded re-run.
func ShrinkSeed(exe, dir, kernel, strategy, seed string, attempts int, wall, runWall time.Duration, b Budget) (Shrunk, error) {
	sh := Shrunk{Strategy: strategy, Seed: seed}
	out := filepath.Join(dir, "shrunk", kernel)
	if err := os.RemoveAll(out); err != nil {
		return sh, err
	}
	// The shrinker stops itself at wall; the process gets a margin for the
	// seed's own run and the recorded re-run of the result.
	log, err := runExe(exe, dir, b, 2*wall+runWall, "-test.run", "^TestKernels$/^"+kernel+"$", "-test.v",
		"-sim.seed="+seed, "-sim.strategy="+strategy, "-sim.shrink", fmt.Sprintf("-sim.shrink.attempts=%d", attempts),
		"-sim.shrink.wall="+wall.String(), "-sim.out="+out, "-sim.record=false", "-sim.scan=false")
	if err != nil {
		return sh, err
	}
	found, _ := filepath.Glob(filepath.Join(out, "*", "shrunk", "shrink.json"))
	if len(found) != 1 {
		return sh, fmt.Errorf("goker: the shrink of %s at %s left %d summaries under %s; the end of its output:\n%s", kernel, seed, len(found), out, tail(strings.TrimSpace(log), 8))
	}
	text, err := os.ReadFile(found[0])
	if err != nil {
		return sh, err
	}
	var sum struct {
		Before   struct{ Preemptions int64 } `json:"before"`
		After    struct{ Preemptions int64 } `json:"after"`
		Attempts int                         `json:"attempts"`
		Stopped  string                      `json:"stopped"`
		Replay   string                      `json:"replay"`
		Error    string                      `json:"shrink_error"`
	}
	if err := json.Unmarshal(text, &sum); err != nil {
		return sh, fmt.Errorf("goker: %s: %v", found[0], err)
	}
	if sum.Error != "" {
		return sh, fmt.Errorf("goker: the shrink of %s at %s: %s", kernel, seed, sum.Error)
	}
	sh.Before, sh.After, sh.Attempts, sh.Stopped, sh.Replay = sum.Before.Preemptions, sum.After.Preemptions, sum.Attempts, sum.Stopped, sum.Replay
	sh.Failure, err = replayFile(exe, dir, kernel, sh.Replay, runWall, b)
	sh.Reproduces = err == nil && Definite(sh.Failure)
	return sh, err
}

// ReplayFile runs a replay file of kernel (a shrunk run's) again, within
// wall, and returns the first line of its failure, "" when it passed. It
// writes no artifacts: the file it replays is the run's record.
func ReplayFile(exe, dir, kernel, file string, wall time.Duration) (string, error) {
	return replayFile(exe, dir, kernel, file, wall, Budget{})
}

// replayFile is ReplayFile with each bound of b set (the settle phase is
// not in the file).
func replayFile(exe, dir, kernel, file string, wall time.Duration, b Budget) (string, error) {
	out, err := runExe(exe, dir, b, wall, "-test.run", "^TestKernels$/^"+kernel+"$", "-test.v",
		"-sim.replay="+file, "-sim.record=false", "-sim.scan=false", "-sim.artifacts=false")
	if err != nil {
		return "", err
	}
	return failureLine(out), nil
}

var failureRE = regexp.MustCompile(`(?m)^\s*failure\s+(\S.*)$`)

// failureLine is the first line of the failure in a failure report.
func failureLine(out string) string {
	if m := failureRE.FindStringSubmatch(out); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// runExe runs the harness binary with args, within b and bounded by wall,
// and returns its output; a failing test is not an error, a binary that did
// not run or ran over wall is.
func runExe(exe, dir string, b Budget, wall time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wall)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = b.env()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("goker: %s ran over %v", strings.Join(args, " "), wall)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return string(out), err
	}
	return string(out), nil
}

package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// Families are the claim families' test packages, in CLAIMS.md's order.
var Families = []string{"./scenarios/oc", "./scenarios/ms", "./scenarios/dr", "./scenarios/tw", "./scenarios/lf"}

// Runner runs go test processes for the audit and reports progress.
type Runner struct {
	Root    string        // module root
	Out     string        // output directory (out/)
	Pkgs    []string      // claim family packages (Families)
	Log     io.Writer     // progress lines
	Timeout time.Duration // per go test process
	// Env adds to the claim checks' environment (a shard's slice, or the
	// shards to merge).
	Env map[string]string
}

// statsLine mirrors simtest.Summary's JSON.
type statsLine struct {
	Test             string `json:"test"`
	Seeds            int    `json:"seeds"`
	Failures         int    `json:"failures"`
	FirstFailure     int    `json:"first_failure"`
	FirstFailingSeed string `json:"first_failing_seed"`
	FirstFailureMsg  string `json:"first_failure_msg"`
}

func readStats(path string) ([]statsLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []statsLine
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var s statsLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// goTest runs go test with the simulation settings in env (the
// environment form of the -sim flags reaches every package of a pattern,
// also those that define no flags).
func (r Runner) goTest(ctx context.Context, out io.Writer, env map[string]string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	// -p 1: the wall-clock claims (DR-8, TW-9) measure ratios on a machine
	// that no other test binary of this run is loading.
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1", "-p", "1", "-timeout", r.Timeout.String()}, args...)...)
	cmd.Dir = r.Root
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd.Run()
}

// simEnv is the environment of one audit go test: seeds, no corpus
// recording, and where claim records, stats and artifacts go.
func simEnv(seeds int, claimsFile, statsFile, artifacts string) map[string]string {
	return map[string]string{
		"WINDTUNNEL_SIM_SEEDS":  fmt.Sprint(seeds),
		"WINDTUNNEL_SIM_RECORD": "false",
		"WINDTUNNEL_SIM_STATS":  statsFile,
		"WINDTUNNEL_SIM_OUT":    artifacts,
		"WINDTUNNEL_CLAIMS":     claimsFile,
	}
}

// RunClaims runs the scenario tests matching pattern over seeds and returns
// the claim records they wrote. Progress (each test's result and each claim
// record) streams to r.Log. A failing test is not an error here: its claims
// are recorded as violated.
func (r Runner) RunClaims(ctx context.Context, pattern string, seeds int) ([]claims.Record, error) {
	dir := filepath.Join(r.Out, "claims")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	recFile, _ := filepath.Abs(filepath.Join(dir, "claims.jsonl"))
	statsFile, _ := filepath.Abs(filepath.Join(dir, "stats.jsonl"))
	artDir, _ := filepath.Abs(filepath.Join(dir, "artifacts"))
	logFile, err := os.Create(filepath.Join(dir, "output.txt"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if progressLine(line) {
				fmt.Fprintln(r.Log, "  "+strings.TrimSpace(line))
			}
		}
	}()
	args := append([]string{"-v", "-run", pattern}, r.Pkgs...)
	env := simEnv(seeds, recFile, statsFile, artDir)
	for k, v := range r.Env {
		env[k] = v
	}
	runErr := r.goTest(ctx, pw, env, args...)
	pw.Close()
	<-done
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return nil, fmt.Errorf("go test: %v", runErr)
	}
	recs, err := claims.Read(recFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the scenario tests wrote no claim records (see %s)", logFile.Name())
	}
	return recs, err
}

func progressLine(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "claim ") || strings.Contains(t, "claim_test.go") ||
		(strings.HasPrefix(l, "--- ") && !strings.Contains(l, "/")) ||
		strings.HasPrefix(t, "FAIL") || strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "panic:") ||
		strings.Contains(t, ": claim ")
}

// RunMutant applies m, runs its checks over seeds, and says whether and
// after how many seeds they caught it.
func (r Runner) RunMutant(ctx context.Context, m mutants.Mutant, seeds int) MutantResult {
	res := MutantResult{ID: m.ID, Kind: m.Kind, Claims: m.Claims, What: m.What, SeedBudget: seeds}
	if m.Seeds > 0 {
		res.SeedBudget = m.Seeds
	}
	dir, _ := filepath.Abs(filepath.Join(r.Out, "mutants", m.ID))
	_ = os.RemoveAll(dir)
	overlay, err := m.Apply(r.Root, dir)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	statsFile := filepath.Join(dir, "stats.jsonl")
	var out bytes.Buffer
	args := []string{"-overlay=" + overlay, "-run", m.Tests, m.Pkg}
	runErr := r.goTest(ctx, &out, simEnv(res.SeedBudget, filepath.Join(dir, "claims.jsonl"), statsFile, filepath.Join(dir, "artifacts")), args...)
	_ = os.WriteFile(filepath.Join(dir, "output.txt"), out.Bytes(), 0o644)
	text := out.String()
	switch {
	case strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]"):
		res.Error = "the mutant does not build: see " + filepath.Join(dir, "output.txt")
		return res
	case strings.Contains(text, "no tests to run"):
		res.Error = fmt.Sprintf("no claim check in %s matches %q", m.Pkg, m.Tests)
		return res
	case runErr == nil:
		return res // survived
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		res.Error = fmt.Sprintf("go test: %v", runErr)
		return res
	}
	res.Caught = true
	res.SeedsToCatch = 1
	stats, err := readStats(statsFile)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	for _, s := range stats {
		if s.Failures > 0 {
			res.SeedsToCatch = s.FirstFailure
			res.CaughtBy = fmt.Sprintf("%s (seed %s: %s)", s.Test, s.FirstFailingSeed, oneLine(s.FirstFailureMsg, 120))
			break
		}
	}
	if res.CaughtBy == "" {
		// No single seed failed: the test failed on a verdict over all its
		// seeds (a documented deviation no longer reproduced, a ratio over
		// the run). It needed every seed it ran.
		res.CaughtBy = firstFailedTest(text)
		top, _, _ := strings.Cut(res.CaughtBy, "/")
		top, _, _ = strings.Cut(top, " ")
		for _, s := range stats {
			if s.Test == top {
				res.SeedsToCatch = s.Seeds
				res.CaughtBy += fmt.Sprintf(" (its verdict over all %d seeds)", s.Seeds)
			}
		}
	}
	return res
}

func firstFailedTest(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL: ") {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "--- FAIL: "))
		}
	}
	return "a failing test (see output.txt)"
}

// RunMutants runs ms with up to parallel go test processes at once and
// returns their results in catalogue order.
func (r Runner) RunMutants(ctx context.Context, ms []mutants.Mutant, seeds, parallel int) []MutantResult {
	results := make([]MutantResult, len(ms))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, m := range ms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			res := r.RunMutant(ctx, m, seeds)
			results[i] = res
			mu.Lock()
			done++
			state := "SURVIVED"
			switch {
			case res.Error != "":
				state = "ERROR: " + res.Error
			case res.Caught:
				state = fmt.Sprintf("caught after %d seed(s) by %s", res.SeedsToCatch, res.CaughtBy)
			}
			fmt.Fprintf(r.Log, "  [mutant %d/%d] %-45s %s (%v)\n", done, len(ms), m.ID, state, time.Since(start).Round(time.Second))
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results
}

// Commit describes the checked-out commit, for the report.
func Commit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short=12", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	st := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	st.Dir = root
	if o, err := st.Output(); err == nil && len(bytes.TrimSpace(o)) > 0 {
		c += "+uncommitted"
	}
	return c
}

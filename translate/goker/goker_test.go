package goker_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/translate/goker"
)

var (
	all        = flag.Bool("goker.all", false, "fly every kernel (make goker) instead of the sample")
	strategies = flag.String("goker.strategies", "random,pct,pos,surw", "strategies of the whole set, comma-separated")
	seeds      = flag.Int("goker.seeds", 1000, "seeds per kernel and strategy of the whole set")
	realRuns   = flag.Int("goker.real", 20, "runs of each kernel on real goroutines with the leak profile")
	table      = flag.String("goker.table", "", "write the whole set's table (markdown) to this file")
	kernels    = flag.String("goker.run", ".*", "the whole set's kernels: a regular expression of their names")
	replay     = flag.String("goker.replay", "", "replay this seed of the kernel -goker.run names under the first of -goker.strategies")
	workDir    = flag.String("goker.dir", "", "translate into this directory (kept, with each strategy's results-STRATEGY.jsonl) instead of a temporary one")
	reuse      = flag.Bool("goker.reuse", false, "with -goker.dir: render the table from the results already there instead of flying again")
	shrink     = flag.Bool("goker.shrink", false, "with -goker.replay: shrink the failing run too")
	realFile   = flag.String("goker.realfile", "", "keep the real-runtime rates in this JSON file: read them from it when it exists, else measure and write them")
)

// sample are small kernels whose bugs need a particular interleaving: a
// double lock (AB-BA) and channel/lock mixes. They must be found.
var sample = []string{"Etcd6857", "Kubernetes10182", "Grpc795"}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func prepare(t *testing.T) (string, string, []goker.Kernel) {
	src, err := goker.Dir()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	if *workDir != "" {
		dir = *workDir
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	ks, err := goker.Prepare(src, dir, moduleRoot(t))
	require.NoError(t, err)
	return src, dir, ks
}

// TestGoKerSample translates the whole set (what it cannot take is listed
// with file:line), and flies a few kernels: the leak oracle finds each.
func TestGoKerSample(t *testing.T) {
	if *all {
		t.Skip("-goker.all runs TestGoKerAll")
	}
	_, dir, ks := prepare(t)
	require.GreaterOrEqual(t, len(ks), 60, "GoKer has 63 kernels")
	for _, k := range ks {
		for _, is := range k.Issues {
			assert.True(t, strings.HasPrefix(is.Pos, k.File+":"), "%s: issue %v names its file:line", k.Name, is)
		}
	}
	rs, out, err := goker.Fly(dir, strings.Join(sample, "|"), "random", 20)
	require.NoError(t, err)
	require.Len(t, rs, len(sample), "one result per sample kernel:\n%s", out)
	for _, r := range rs {
		assert.NotZero(t, r.Found, "%s: its leak was not found in %d seeds", r.Kernel, r.Seeds)
		assert.True(t, goker.Definite(r.Message), "%s: %s", r.Kernel, r.Message)
	}
}

// TestGoKerReplay runs one found kernel's seed again and shows its report
// (make goker-replay KERNEL=… SEED=… STRATEGY=…); it fails unless the run
// fails again.
func TestGoKerReplay(t *testing.T) {
	if *replay == "" {
		t.Skip("replays run with -goker.replay=SEED (make goker-replay)")
	}
	_, dir, _ := prepare(t)
	st := strings.Split(*strategies, ",")[0]
	out, failed, err := goker.Replay(dir, *kernels, st, *replay, *shrink)
	require.NoError(t, err)
	t.Log("\n" + out)
	assert.True(t, failed, "the replayed run of %s did not fail", *kernels)
}

// TestGoKerAll flies every translated kernel under each strategy, runs
// every kernel on real goroutines, and writes the table (make goker).
func TestGoKerAll(t *testing.T) {
	if !*all {
		t.Skip("the whole set runs with -goker.all (make goker)")
	}
	pick, err := regexp.Compile("^(" + *kernels + ")$")
	require.NoError(t, err)
	src, dir, ks := prepare(t)
	found := map[string]map[string]goker.Result{}
	var strats []string
	for _, st := range strings.Split(*strategies, ",") {
		var rs []goker.Result
		var out string
		var err error
		if *reuse {
			rs, err = goker.ReadResults(dir, st)
		} else {
			rs, out, err = goker.Fly(dir, *kernels, st, *seeds)
		}
		if err != nil {
			t.Errorf("strategy %s: %v", st, err)
			continue
		}
		strats = append(strats, st)
		for _, r := range rs {
			if found[r.Kernel] == nil {
				found[r.Kernel] = map[string]goker.Result{}
			}
			found[r.Kernel][st] = r
		}
		_ = out // kept in DIR/out-STRATEGY.log
	}
	rates := realRates(t, src, ks, pick)
	var b strings.Builder
	fmt.Fprintf(&b, "| kernel | translated | found | %s | real runtime | published | replay |\n|---|---|---|", strings.Join(strats, " | "))
	for range strats {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	nFound, nTrans, nKernels := 0, 0, 0
	for _, k := range ks {
		if !pick.MatchString(k.Name) {
			continue
		}
		nKernels++
		realCell := rates[k.Name]
		pub := k.Published
		if pub == "" {
			pub = "—"
		}
		if len(k.Issues) > 0 {
			fmt.Fprintf(&b, "| %s | no: %s |  |%s %s | %s |  |\n", k.Name, k.Issues[0], strings.Repeat("  |", len(strats)), realCell, pub)
			continue
		}
		nTrans++
		var cells []string
		any := false
		replayCmd := ""
		for _, st := range strats {
			r, ok := found[k.Name][st]
			switch {
			case !ok:
				cells = append(cells, "no result")
			case r.Found > 0 && goker.Definite(r.Message):
				if !any {
					replayCmd = fmt.Sprintf("`make goker-replay KERNEL=%s SEED=%s STRATEGY=%s`", k.Name, r.Seed, st)
				}
				any = true
				cells = append(cells, fmt.Sprintf("%d", r.Found))
			case r.Found > 0 && strings.Contains(r.Message, "still blocked"):
				cells = append(cells, fmt.Sprintf("possible leak at %d (%s)", r.Found, r.Seed))
			case r.Found > 0:
				kind, _, _ := strings.Cut(r.Message, " ")
				cells = append(cells, fmt.Sprintf("no: %s at seed %d", kind, r.Found))
			default:
				cells = append(cells, fmt.Sprintf("not in %d", r.Seeds))
			}
		}
		yes := "no"
		if any {
			yes = "yes"
			nFound++
		}
		fmt.Fprintf(&b, "| %s | yes | %s | %s | %s | %s | %s |\n", k.Name, yes, strings.Join(cells, " | "), realCell, pub, replayCmd)
	}
	fmt.Fprintf(&b, "\n%d kernels, %d translated, %d found within %d seeds by some strategy.\n", nKernels, nTrans, nFound, *seeds)
	t.Log("\n" + b.String())
	if *table != "" {
		require.NoError(t, os.WriteFile(*table, []byte(b.String()), 0o644))
	}
}

// realRates runs every picked kernel on real goroutines -goker.real times
// ("k/n" per kernel), or reads the rates -goker.realfile kept.
func realRates(t *testing.T, src string, ks []goker.Kernel, pick *regexp.Regexp) map[string]string {
	rates := map[string]string{}
	if *realFile != "" {
		if b, err := os.ReadFile(*realFile); err == nil {
			require.NoError(t, json.Unmarshal(b, &rates))
			return rates
		}
	}
	exe, err := goker.BuildReal(src, t.TempDir())
	require.NoError(t, err)
	for _, k := range ks {
		if !pick.MatchString(k.Name) {
			continue
		}
		n, err := goker.RealRate(exe, k.Name, *realRuns)
		switch {
		case err != nil:
			rates[k.Name] = "hangs"
		case *realRuns == 0:
			rates[k.Name] = "not run"
		default:
			rates[k.Name] = fmt.Sprintf("%d/%d", n, *realRuns)
		}
	}
	if *realFile != "" {
		b, err := json.Marshal(rates)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*realFile, b, 0o644))
	}
	return rates
}

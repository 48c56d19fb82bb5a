package simtest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// seedFlag parses a seed in hex (0x5eed) or decimal. The flag package turns a
// parse error into "invalid value ... for flag -sim.seed: ...".
type seedFlag struct {
	set bool
	v   uint64
}

func (f *seedFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return fmt.Sprintf("%#x", f.v)
}

func (f *seedFlag) Set(s string) error {
	v, err := ParseSeed(s)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

// ParseSeed parses a seed written in hex with a 0x prefix, or in decimal.
func ParseSeed(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	var v uint64
	var err error
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, err = strconv.ParseUint(s[2:], 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("seed %q is not a 64-bit number in hex (0x5eed) or decimal", s)
	}
	return v, nil
}

var (
	flagSeed        seedFlag
	flagSeeds       = flag.Int("sim.seeds", 0, "number of seeds per simulation test (0: the test's default)")
	flagStrategy    = flag.String("sim.strategy", "random", "scheduling strategy: random or pct (replay: see -sim.replay)")
	flagPCTDepth    = flag.Int("sim.pct.depth", 3, "PCT bug depth d (d-1 priority change points)")
	flagPCTSteps    = flag.Int64("sim.pct.steps", 0, "PCT expected steps per run (0: measured by one calibration run)")
	flagOut         = flag.String("sim.out", "", "directory for failure artifacts (default: $TMPDIR/windtunnel)")
	flagDeterminism = flag.Bool("sim.determinism", false, "run every seed twice and fail on any difference in the trace")
	flagReplay      = flag.String("sim.replay", "", "decision file written by a failure report: replay exactly that schedule (needs -sim.seed)")
	flagRecord      = flag.Bool("sim.record", true, "append seeds that fail to the test's corpus under testdata/windtunnel")
	flagKeepGoing   = flag.Bool("sim.keepgoing", false, "keep running seeds after the first failure")
	flagStepTime    = flag.Duration("sim.steptime", 0, "virtual time added per scheduling step (default 0: time moves only through sleeps and modelled latency)")
	flagMaxSteps    = flag.Int64("sim.maxsteps", 0, "override the step limit of every run (0: the test's own)")
	flagStats       = flag.String("sim.stats", "", "append one JSON line per simulation test (seeds, failures, steps, virtual and wall time) to this file")
	flagTrace       = flag.String("sim.trace", "", "with -sim.seed: write the run's full trace to this file, whether it passes or fails")
)

func init() {
	flag.Var(&flagSeed, "sim.seed", "run only this seed (hex 0x... or decimal)")
}

// settings is the validated form of the flags for one test.
type settings struct {
	seeds       int
	onlySeed    *uint64
	strategy    string
	pctDepth    int
	pctSteps    int64
	out         string
	determinism bool
	replay      []int32
	replayFile  string
	record      bool
	keepGoing   bool
	stepTime    time.Duration
	maxSteps    int64
	stats       string
	trace       string
}

// readSettings validates the flags, naming the flag in every error.
func readSettings(defaultSeeds int) (settings, error) {
	st := settings{
		seeds: defaultSeeds, strategy: *flagStrategy, pctDepth: *flagPCTDepth, pctSteps: *flagPCTSteps,
		out: *flagOut, determinism: *flagDeterminism, record: *flagRecord, keepGoing: *flagKeepGoing,
		stepTime: *flagStepTime, maxSteps: *flagMaxSteps, stats: *flagStats, trace: *flagTrace,
	}
	if *flagSeeds < 0 {
		return st, fmt.Errorf("-sim.seeds must be positive, got %d", *flagSeeds)
	}
	if *flagSeeds > 0 {
		st.seeds = *flagSeeds
	}
	if st.seeds <= 0 {
		return st, fmt.Errorf("the test's default seed count must be positive, got %d", st.seeds)
	}
	if flagSeed.set {
		v := flagSeed.v
		st.onlySeed = &v
	}
	switch st.strategy {
	case "random", "pct":
	default:
		return st, fmt.Errorf("-sim.strategy: unknown strategy %q (want random or pct; to replay a schedule use -sim.replay=FILE)", st.strategy)
	}
	if st.pctDepth < 1 {
		return st, fmt.Errorf("-sim.pct.depth must be at least 1, got %d", st.pctDepth)
	}
	if st.pctSteps < 0 {
		return st, fmt.Errorf("-sim.pct.steps must not be negative, got %d", st.pctSteps)
	}
	if st.stepTime < 0 {
		return st, fmt.Errorf("-sim.steptime must not be negative, got %v", st.stepTime)
	}
	if st.maxSteps < 0 {
		return st, fmt.Errorf("-sim.maxsteps must be positive, got %d", st.maxSteps)
	}
	if st.trace != "" && st.onlySeed == nil {
		return st, fmt.Errorf("-sim.trace needs -sim.seed: it writes the trace of one run")
	}
	if *flagReplay != "" {
		if st.onlySeed == nil {
			return st, fmt.Errorf("-sim.replay needs -sim.seed: a decision file replays one seed's schedule")
		}
		ds, err := readDecisions(*flagReplay)
		if err != nil {
			return st, fmt.Errorf("-sim.replay: %v", err)
		}
		st.replay, st.replayFile = ds, *flagReplay
	}
	if st.out == "" {
		st.out = os.TempDir() + "/windtunnel"
	}
	return st, nil
}

func (st settings) strategyFor(calibratedSteps int64) sim.Strategy {
	switch {
	case st.replay != nil:
		return sim.Replay(st.replay)
	case st.strategy == "pct":
		return sim.PCT(st.pctDepth, calibratedSteps)
	}
	return sim.RandomWalk()
}

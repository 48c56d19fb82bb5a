package simtest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
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
		return 0, fmt.Errorf("seed %q is not a 64-bit number in hex (0x5eed) or decimal", clip(s, 40))
	}
	return v, nil
}

// The simulation settings. Each flag -sim.x.y also has an environment form,
// WINDTUNNEL_SIM_X_Y, read when the flag is not given: go test ./... runs
// packages that do not define the flags, and the environment reaches all of
// them (the audit passes its settings that way).
var (
	flagSeed        seedFlag
	flagSeeds       = flag.Int("sim.seeds", 0, "number of seeds per simulation test (0: the test's default)")
	flagStrategy    = flag.String("sim.strategy", "random", "scheduling strategy: random, pct, pos, surw or goorder (replay: see -sim.replay)")
	flagPCTDepth    = flag.Int("sim.pct.depth", 3, "PCT bug depth d (d-1 priority change points)")
	flagPCTSteps    = flag.Int64("sim.pct.steps", 0, "PCT expected steps per run (0: measured by one calibration run)")
	flagOut         = flag.String("sim.out", "", "directory for failure artifacts (default: $TMPDIR/windtunnel)")
	flagDeterminism = flag.Bool("sim.determinism", false, "run every seed twice (every proof: explore twice) and fail on any difference")
	flagDetSeeds    = flag.Int("sim.determinism.seeds", 0, "with -sim.determinism: run only the first N regular seeds of each test twice, and every corpus, -sim.seed and replay seed (0: every seed)")
	flagReplay      = flag.String("sim.replay", "", "replay file written by a failure report: replays exactly that run (it holds the test, seed and settings)")
	flagReplayGuide = flag.Bool("sim.replay.guided", false, "with -sim.replay: follow the file's schedule where it fits and go on without preempting where it does not, instead of failing when the run takes another step (for other code than the file's: the code without a mutant)")
	flagRecord      = flag.Bool("sim.record", true, "append seeds that fail to the test's corpus under testdata/windtunnel")
	flagArtifacts   = flag.Bool("sim.artifacts", true, "write a failing seed's artifacts (its full trace and replay file; a second run of the seed, whose trace hash must match); false: the failure block's reproduce command is all")
	flagKeepGoing   = flag.Bool("sim.keepgoing", false, "keep running seeds after the first failure")
	flagStepTime    = flag.Duration("sim.steptime", 0, "virtual time added per scheduling step (default 0: time moves only through sleeps and modelled latency)")
	flagMaxSteps    = flag.Int64("sim.maxsteps", 0, "override the step limit of every run (0: the test's own)")
	flagStats       = flag.String("sim.stats", "", "append one JSON line per simulation test (seeds, failures, steps, virtual and wall time) to this file")
	flagShard       = flag.String("sim.shard", "", "run only the i-th of n disjoint slices of each test's seeds, as i/n (0-based; the corpus runs in slice 0)")
	flagParallel    = flag.Int("sim.parallel", 0, "seeds of one test run at once, each on its own simulator (0: GOMAXPROCS); output is identical to a sequential run")
	flagTrace       = flag.String("sim.trace", "", "with -sim.seed or -sim.replay: write the run's full trace to this file, whether it passes or fails")
	flagShrink      = flag.Bool("sim.shrink", false, "shrink a failing seed: fewer operations, faults and preemptions, then print its interleaving table and write its timeline page and replay file")
	flagShrinkTries = flag.Int("sim.shrink.attempts", 600, "re-runs a shrink may make at most")
	flagShrinkMore  = flag.Int("sim.shrink.more", 0, "re-runs a shrink may add, running its passes once more, when -sim.shrink.attempts ran out on a result above the goal (10 operations, 3 preemptions); 0: none")
	flagShrinkWall  = flag.Duration("sim.shrink.wall", 3*time.Minute, "wall time a shrink may take at most (a safety net: a shrink stopped by it says so, and its result depends on the machine)")
	flagHang        = flag.Duration("sim.hang", protocol.DefaultHangAfter, "fail a run whose task runs this long in wall time without reaching a scheduling point (it blocks on a channel, a sync lock or I/O, or loops), naming the task and where it waits; a task that computes gets six times as long (0: never)")
	flagScan        = flag.Bool("sim.scan", true, "scan the test's package and its in-module imports for determinism-contract violations (go statements, channels, sync, the wall clock) once per test process, before the first simulation; false: skip the scan")
)

func init() {
	flag.Var(&flagSeed, "sim.seed", "run only this seed (hex 0x... or decimal)")
}

// EnvName is the environment form of a -sim flag: sim.pct.depth becomes
// WINDTUNNEL_SIM_PCT_DEPTH.
func EnvName(flagName string) string {
	return "WINDTUNNEL_" + strings.ToUpper(strings.ReplaceAll(flagName, ".", "_"))
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
	detSeeds    int // with determinism: only regular seeds below this index run twice (0: all)
	replay      *replayFile
	guided      bool // -sim.replay.guided
	record      bool
	artifacts   bool
	keepGoing   bool
	stepTime    time.Duration
	maxSteps    int64
	stats       string
	trace       string
	shrink      bool
	shrinkTries int
	shrinkMore  int
	shrinkWall  time.Duration
	parallel    int
	shard       Shard
	capped      bool // the test's MaxSeeds lowered the seed count

	hang time.Duration // -sim.hang: Config.HangAfter, 0 for never
	scan bool          // -sim.scan
}

// twice reports whether a seed runs a second time to prove the run
// deterministic: every seed under -sim.determinism, or with
// -sim.determinism.seeds=N the test's first N regular seeds and every seed
// named by the corpus, a flag or a replay file (those are the ones a user
// replays). A sample keeps the check cheap enough to ride along with a run
// that is made anyway (make test's audit-quick).
func (st settings) twice(ps plannedSeed) bool {
	return st.determinism && (st.detSeeds == 0 || ps.index < 0 || ps.index < st.detSeeds)
}

// Shard is the slice i of n of a test's regular seeds.
type Shard struct {
	index, count int
}

// ParseShard parses i/n (0 ≤ i < n); "" is the whole, 0/1.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{0, 1}, nil
	}
	var i, n int
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != s {
		return Shard{}, fmt.Errorf("shard %q is not i/n", clip(s, 20))
	}
	if n < 1 || n > 1_000_000 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %d/%d: need 0 ≤ i < n ≤ 1000000", i, n)
	}
	return Shard{i, n}, nil
}

func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.index, sh.count) }

// Index and Count are i and n.
func (sh Shard) Index() int { return sh.index }
func (sh Shard) Count() int { return sh.count }

// slice is the half-open range of seed indices the shard runs: the
// seeds split into n contiguous slices of sizes differing by at most one.
func (sh Shard) slice(seeds int) (from, to int) {
	if sh.count <= 1 {
		return 0, seeds
	}
	return sh.index * seeds / sh.count, (sh.index + 1) * seeds / sh.count
}

// The settings are read and validated once per process: a bad value is one
// error, not one per test.
var (
	settingsOnce sync.Once
	settingsBase settings
	settingsErr  error
)

// exit ends the test binary; tests replace it.
var exit = os.Exit

// currentSettings returns the process's settings with the test's default
// seed count applied.
func currentSettings(defaultSeeds int) (settings, error) {
	return currentSettingsCapped(defaultSeeds, 0)
}

// currentSettingsCapped also applies a test's seed cap (0: none).
func currentSettingsCapped(defaultSeeds, maxSeeds int) (settings, error) {
	settingsOnce.Do(func() {
		settingsBase, settingsErr = readSettings()
		if settingsErr != nil {
			// Reported once, and the test binary stops: every simulation
			// test would fail with the same reason, and the ones that do
			// not simulate have run or will be run by a fixed command.
			fmt.Fprintf(os.Stderr, "windtunnel: invalid simulation settings: %v\n", settingsErr)
			exit(2)
		}
	})
	st := settingsBase
	if settingsErr != nil {
		return st, settingsErr
	}
	if st.seeds == 0 {
		st.seeds = defaultSeeds
	}
	if st.seeds <= 0 {
		return st, fmt.Errorf("the test's default seed count must be positive, got %d", st.seeds)
	}
	if maxSeeds > 0 && st.seeds > maxSeeds {
		st.seeds, st.capped = maxSeeds, true
	}
	return st, nil
}

// fromEnv applies the environment form of every -sim flag that was not
// given on the command line. A WINDTUNNEL_SIM_ variable that is no flag's
// is an error: a misspelled setting would otherwise be ignored, and the run
// would not be the one asked for.
func fromEnv() error {
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := unknownEnv(knownEnv(), os.Environ()); err != nil {
		return err
	}
	var err error
	flag.VisitAll(func(f *flag.Flag) {
		if err != nil || !strings.HasPrefix(f.Name, "sim.") || given[f.Name] {
			return
		}
		v, ok := os.LookupEnv(EnvName(f.Name))
		if !ok {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %v", EnvName(f.Name), clip(v, 40), e)
		}
	})
	return err
}

// envPrefix starts the environment form of every -sim flag (EnvName).
const envPrefix = "WINDTUNNEL_SIM_"

// knownEnv is the environment form of every registered -sim flag, sorted:
// it is derived from the flags, so a setting added as a flag is known with
// no list to keep.
func knownEnv() []string {
	var names []string
	flag.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "sim.") {
			names = append(names, EnvName(f.Name))
		}
	})
	slices.Sort(names)
	return names
}

// unknownEnv refuses the variables of env (KEY=VALUE) that look like
// settings, whatever their case, and are none of known, naming the nearest
// known ones, or listing them all when none is near.
func unknownEnv(known, env []string) error {
	var bad []string
	far := false
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(name), envPrefix) || slices.Contains(known, name) {
			continue
		}
		msg := fmt.Sprintf("%s=%q is no setting", name, clip(v, 40))
		if near := nearestEnv(strings.ToUpper(name), known); len(near) > 0 {
			msg += " (did you mean " + strings.Join(near, " or ") + "?)"
		} else {
			far = true
		}
		bad = append(bad, msg)
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	err := strings.Join(bad, "; ")
	if far {
		err += "; the settings are " + strings.Join(known, ", ")
	}
	return errors.New(err)
}

// nearestEnv returns the known names closest to name in edits, if they are
// close enough to be a slip of the keyboard (a third of the setting's name).
func nearestEnv(name string, known []string) []string {
	var near []string
	best := -1
	for _, k := range known {
		d := editDistance(strings.TrimPrefix(name, envPrefix), strings.TrimPrefix(k, envPrefix))
		if d > max(1, len(k[len(envPrefix):])/3) {
			continue
		}
		switch {
		case best < 0 || d < best:
			near, best = []string{k}, d
		case d == best:
			near = append(near, k)
		}
	}
	return near
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// setBy names a setting as the user gave it, for its errors: the variable
// WINDTUNNEL_SIM_SEEDS when it came from the environment, else the flag
// -sim.seeds.
func setBy(name string) string {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	if _, env := os.LookupEnv(EnvName(name)); env && !given {
		return EnvName(name)
	}
	return "-" + name
}

// wasGiven reports whether a flag was set on the command line or in the
// environment.
func wasGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	if !given {
		_, given = os.LookupEnv(EnvName(name))
	}
	return given
}

// readSettings validates the flags, naming in every error the flag or the
// variable that set the value (setBy).
func readSettings() (settings, error) {
	if err := fromEnv(); err != nil {
		return settings{}, err
	}
	st := settings{
		strategy: *flagStrategy, pctDepth: *flagPCTDepth, pctSteps: *flagPCTSteps,
		out: *flagOut, determinism: *flagDeterminism, record: *flagRecord, artifacts: *flagArtifacts, keepGoing: *flagKeepGoing,
		stepTime: *flagStepTime, maxSteps: *flagMaxSteps, stats: *flagStats, trace: *flagTrace,
		parallel: *flagParallel, guided: *flagReplayGuide, shrink: *flagShrink, shrinkTries: *flagShrinkTries, shrinkMore: *flagShrinkMore, shrinkWall: *flagShrinkWall,
	}
	st.hang, st.scan = *flagHang, *flagScan
	if st.hang < 0 {
		return st, fmt.Errorf("%s must not be negative, got %v", setBy("sim.hang"), st.hang)
	}
	shard, err := ParseShard(*flagShard)
	if err != nil {
		return st, fmt.Errorf("%s: %v", setBy("sim.shard"), err)
	}
	st.shard = shard
	if *flagDetSeeds < 0 {
		return st, fmt.Errorf("%s must not be negative, got %d", setBy("sim.determinism.seeds"), *flagDetSeeds)
	}
	st.detSeeds = *flagDetSeeds
	if *flagSeeds < 0 {
		return st, fmt.Errorf("%s must be positive, got %d", setBy("sim.seeds"), *flagSeeds)
	}
	st.seeds = *flagSeeds
	if flagSeed.set {
		v := flagSeed.v
		st.onlySeed = &v
	}
	switch st.strategy {
	case "random", "pct", "pos", "surw", "goorder":
	default:
		return st, fmt.Errorf("%s: unknown strategy %q (want random, pct, pos, surw or goorder; to replay a run use -sim.replay=FILE)", setBy("sim.strategy"), clip(st.strategy, 40))
	}
	if st.pctDepth < 1 {
		return st, fmt.Errorf("%s must be at least 1, got %d", setBy("sim.pct.depth"), st.pctDepth)
	}
	if st.pctSteps < 0 {
		return st, fmt.Errorf("%s must not be negative, got %d", setBy("sim.pct.steps"), st.pctSteps)
	}
	if st.shrinkWall <= 0 {
		return st, fmt.Errorf("%s must be positive, got %v", setBy("sim.shrink.wall"), st.shrinkWall)
	}
	if st.shrinkTries < 1 {
		return st, fmt.Errorf("%s must be at least 1, got %d", setBy("sim.shrink.attempts"), st.shrinkTries)
	}
	if st.shrinkMore < 0 {
		return st, fmt.Errorf("%s must not be negative, got %d", setBy("sim.shrink.more"), st.shrinkMore)
	}
	if st.parallel < 0 {
		return st, fmt.Errorf("%s must not be negative, got %d", setBy("sim.parallel"), st.parallel)
	}
	if st.stepTime < 0 {
		return st, fmt.Errorf("%s must not be negative, got %v", setBy("sim.steptime"), st.stepTime)
	}
	if st.maxSteps < 0 {
		return st, fmt.Errorf("%s must be positive, got %d", setBy("sim.maxsteps"), st.maxSteps)
	}
	if *flagReplay != "" {
		rf, err := readReplay(*flagReplay)
		if err != nil {
			return st, fmt.Errorf("%s: %v", setBy("sim.replay"), err)
		}
		if err := st.adoptReplay(rf); err != nil {
			return st, fmt.Errorf("%s: %v", setBy("sim.replay"), err)
		}
	}
	if st.guided && st.replay == nil {
		return st, fmt.Errorf("%s needs -sim.replay: it says how to follow a replay file's schedule", setBy("sim.replay.guided"))
	}
	if st.trace != "" && st.onlySeed == nil && st.replay == nil {
		return st, fmt.Errorf("%s needs -sim.seed or -sim.replay: it writes the trace of one run", setBy("sim.trace"))
	}
	if st.out == "" {
		st.out = os.TempDir() + "/windtunnel"
	}
	return st, nil
}

// adoptReplay takes a replay file's settings. Flags that shape a run and
// contradict the file are refused rather than silently overridden: the
// replay would diverge.
func (st *settings) adoptReplay(rf *replayFile) error {
	if st.onlySeed != nil && *st.onlySeed != rf.Seed {
		return fmt.Errorf("%s replays seed %#x of %s, not -sim.seed=%#x", rf.Path, rf.Seed, rf.Test, *st.onlySeed)
	}
	if wasGiven("sim.steptime") && st.stepTime != rf.StepTime {
		return fmt.Errorf("%s was recorded with -sim.steptime=%v, not %s=%v (leave it out: the file holds it)", rf.Path, rf.StepTime, setBy("sim.steptime"), st.stepTime)
	}
	if wasGiven("sim.maxsteps") && st.maxSteps != rf.MaxSteps {
		return fmt.Errorf("%s was recorded with -sim.maxsteps=%d, not %s=%d (leave it out: the file holds it)", rf.Path, rf.MaxSteps, setBy("sim.maxsteps"), st.maxSteps)
	}
	if here := headCommit(); rf.Commit != "unknown" && here != "unknown" && rf.Commit != here {
		return fmt.Errorf("%s was recorded at commit %s, this is %s: a replay needs the same code (git checkout %s)", rf.Path, rf.Commit, here, rf.Commit)
	}
	if m := currentMutation(); rf.Mutant != m.id && !st.guided {
		if rf.Mutant == "" {
			return fmt.Errorf("%s was recorded on the checkout's code, and this run flies %s: replay it without the mutant (make replay FILE=%s)", rf.Path, m, rf.Path)
		}
		return fmt.Errorf("%s was recorded under mutant %s, and this run flies %s: make replay FILE=%s applies the mutant", rf.Path, rf.Mutant, m, rf.Path)
	}
	if rf.Package != "" && rf.Package != packagePath() {
		return fmt.Errorf("%s replays a test of package %s, not of %s: make replay FILE=%s runs it there", rf.Path, rf.Package, packagePath(), rf.Path)
	}
	seed := rf.Seed
	st.onlySeed = &seed
	st.stepTime, st.maxSteps = rf.StepTime, rf.MaxSteps
	st.replay = rf
	st.record = false
	return nil
}

// strategyFor is the strategy of a run: calibratedSteps is PCT's k, prof
// SURW's profile.
func (st settings) strategyFor(calibratedSteps int64, prof *sim.SURWProfile) sim.Strategy {
	switch {
	case st.replay != nil && st.guided:
		return guided(st.replay.Decisions)
	case st.replay != nil:
		return sim.Replay(st.replay.Decisions)
	case st.strategy == "pct":
		return sim.PCT(st.pctDepth, calibratedSteps)
	case st.strategy == "pos":
		return sim.POS()
	case st.strategy == "surw":
		return sim.SURW(prof)
	case st.strategy == "goorder":
		return sim.GoOrder()
	}
	return sim.RandomWalk()
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// CurrentShard is the shard the process runs (-sim.shard).
func CurrentShard() (Shard, error) {
	st, err := currentSettings(1)
	return st.shard, err
}

// SeedsFor is the number of regular seeds a test with defaultSeeds runs
// over the whole sweep (-sim.seeds, else its default).
func SeedsFor(defaultSeeds, maxSeeds int) int {
	st, _ := currentSettingsCapped(defaultSeeds, maxSeeds)
	return st.seeds
}

// guided is protocol.Guided's strategy: the file's schedule where it fits.
func guided(decisions []int32) sim.Strategy { return protocol.Guided(decisions).(sim.Strategy) }

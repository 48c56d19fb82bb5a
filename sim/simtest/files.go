package simtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// The replay file holds everything that shapes one run, then its schedule.
// For example:
//
//	windtunnel replay v6
//	test TestOC2_LostInvalidationAgeBound
//	package ./scenarios/oc
//	seed 0x4c8dfbf301c76ce3
//	strategy pct(depth=3,steps=5120)
//	steptime 1µs
//	maxsteps 0
//	commit 1a2b3c4d5e6f
//	mutant none
//	choices seed
//	keeps seed
//	keeptasks seed
//	decisions 6170
//	0 1 1 2 3*40 …
//
// A decision is the id of the task that ran the step, or `c` for a step
// that ran no task: the clock jumped to the next timer (sim.ClockDecision).
// `3*40` is task 3 for 40 steps in a row, which keeps the file of a long
// run small. Version 5 files, which never hold such runs, are read as they
// are.
//
// The three "seed" lines mean the world's draws and Keep answers come from
// the seed. A shrunk run's file says "choices
// N", "keeps O F" and "keeptasks T" instead, followed by T lines `task
// "name"` (the tasks that asked Keep, quoted). Before the decisions it
// lists the edited workload and fault plan, keyed by task
// (protocol.KeepKey): its N world draws (hex), and its O operation and F
// fault Keep answers (runs of 0 and 1). When T > 0, it also lists, for each
// of those O+F answers, the index of the task it is for; the answer's
// ordinal among that task's calls of the kind follows from the order. The
// package ("-" outside a module) and the mutant ("none", or its ID and,
// quoted, the file it comes from) tell a tool where to run the file and on
// which code. Files of
// older versions are refused: they come from older commits.
//
// The header lines come in this order, each exactly once. The strategy is
// informative (the decisions fix the schedule). The step time and the step
// limit shape the run and are applied on replay. The test, the seed and
// the commit are checked: a file from another test, seed or commit is
// refused with a message that says which, instead of diverging. The world's
// configuration has no other knob a flag can change.
const (
	replayMagic = "windtunnel replay v6"
	// replayMagicV5 is the version before runs (t*k); its files read as
	// version 6's.
	replayMagicV5 = "windtunnel replay v5"
	// maxReplayBytes bounds what readReplay reads: a run has at most
	// 10,000,000 decisions (sim.Config.MaxSteps's default) of at most 7
	// bytes each, plus the header.
	maxReplayBytes = 96 << 20
	// clockToken is a clock jump's decision in a file.
	clockToken = "c"
	// maxReplayDecisions bounds the decisions a file may announce, runs
	// expanded: 2 GiB in memory, room for a run of 5·10^8 steps.
	maxReplayDecisions = 1 << 29
)

// unknownPackage is the package line of a run outside a module.
const unknownPackage = "-"

var replayKeys = []string{"test", "package", "seed", "strategy", "steptime", "maxsteps", "commit", "mutant", "choices", "keeps", "keeptasks", "decisions"}

// replayFile is a parsed replay file.
type replayFile struct {
	Path     string
	Test     string // the test whose seed this is, without the seed subtest
	Seed     uint64
	Strategy string
	StepTime time.Duration
	MaxSteps int64
	Commit   string
	// Package is the test's package relative to the module root
	// ("./scenarios/oc"), "" in files older than v5.
	Package string
	// Mutant is the mutant the run flew instead of the checkout's code
	// ("" for none) and Catalogue the file it comes from ("" for the
	// project's catalogue): a replay must fly the same code.
	Mutant, Catalogue string
	// Choices and Keeps are the world's draws and Keep answers of a
	// shrunk run; Choices nil means the seed's own.
	Choices   []uint64
	Keeps     protocol.Keeps
	Decisions []int32
}

// belongsTo checks that the file replays a seed of test.
func (rf *replayFile) belongsTo(test string) error {
	if rf.Test != test {
		return fmt.Errorf("%s belongs to %s seed %#x, not to %s: run it with -run '^%s$'", rf.Path, rf.Test, rf.Seed, test, regexpQuote(rf.Test))
	}
	return nil
}

func writeReplay(path string, rf replayFile) error { return writeReplayUpTo(path, rf, maxReplayBytes) }

// writeReplayUpTo writes the replay file unless it would be larger than
// limit bytes: readReplay refuses a file over maxReplayBytes, so writing
// one would print a command that cannot run.
func writeReplayUpTo(path string, rf replayFile, limit int) error {
	if err := notTheInput(path); err != nil {
		return err
	}
	var b bytes.Buffer
	choices, keeps, keepTasks := "seed", "seed", "seed"
	var tasks []string  // the task table, in first-use order
	var taskOf [3][]int // each draw's, operation answer's and fault answer's task index
	if rf.Choices != nil {
		choices = strconv.Itoa(len(rf.Choices))
		var err error
		rf.Keeps = fillKeyGaps(rf.Keeps)
		keeps = fmt.Sprintf("%d %d", len(rf.Keeps.Operations), len(rf.Keeps.Faults))
		if tasks, taskOf, err = keepTaskTable(len(rf.Choices), rf.Keeps); err != nil {
			return err
		}
		keepTasks = strconv.Itoa(len(tasks))
	}
	mutant := "none"
	if rf.Mutant != "" {
		mutant = rf.Mutant
		if rf.Catalogue != "" {
			mutant += " " + strconv.Quote(rf.Catalogue)
		}
	}
	pkg := rf.Package
	if pkg == "" {
		pkg = unknownPackage
	}
	fmt.Fprintf(&b, "%s\ntest %s\npackage %s\nseed %#x\nstrategy %s\nsteptime %s\nmaxsteps %d\ncommit %s\nmutant %s\nchoices %s\nkeeps %s\nkeeptasks %s\n",
		replayMagic, rf.Test, pkg, rf.Seed, rf.Strategy, rf.StepTime, rf.MaxSteps, rf.Commit, mutant, choices, keeps, keepTasks)
	for _, t := range tasks {
		fmt.Fprintf(&b, "task %s\n", strconv.Quote(t))
	}
	fmt.Fprintf(&b, "decisions %d\n", len(rf.Decisions))
	for i, c := range rf.Choices {
		fmt.Fprintf(&b, "%#x", c)
		if i%8 == 7 || i == len(rf.Choices)-1 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	if rf.Choices != nil {
		writeBits(&b, rf.Keeps.Operations)
		writeBits(&b, rf.Keeps.Faults)
		if len(tasks) > 0 {
			for _, l := range taskOf {
				writeInts(&b, l)
			}
		}
	}
	tokens := 0
	for i := 0; i < len(rf.Decisions); {
		d, k := rf.Decisions[i], 1
		for i+k < len(rf.Decisions) && rf.Decisions[i+k] == d {
			k++
		}
		if k < 3 { // "3 3" is no longer than "3*2"
			k = 1
		}
		if d == sim.ClockDecision {
			b.WriteString(clockToken)
		} else {
			b.WriteString(strconv.Itoa(int(d)))
		}
		if k > 1 {
			b.WriteByte('*')
			b.WriteString(strconv.Itoa(k))
		}
		i += k
		tokens++
		if tokens%32 == 0 || i == len(rf.Decisions) {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	if b.Len() > limit {
		return fmt.Errorf("no replay file: the run's %d decisions would make one of %d bytes, over the %d a replay file may hold; the seed replays the run", len(rf.Decisions), b.Len(), limit)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func readReplay(path string) (*replayFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read replay file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReplayBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read replay file: %v", err)
	}
	rf, err := parseReplay(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	rf.Path = path
	return rf, nil
}

// parseReplay is strict: the magic line, every header key once and in
// order, then exactly the announced number of decisions.
func parseReplay(data []byte) (*replayFile, error) {
	if len(data) > maxReplayBytes {
		return nil, fmt.Errorf("larger than %d MiB: not a replay file", maxReplayBytes>>20)
	}
	text := string(data)
	line := func() (string, bool) {
		l, rest, ok := strings.Cut(text, "\n")
		if !ok {
			l, rest = text, ""
		}
		text = rest
		return l, ok || l != ""
	}
	magic, _ := line()
	keys := replayKeys
	if magic == replayMagicV5 {
		magic = replayMagic
	}
	if v, ok := strings.CutPrefix(magic, "windtunnel replay v"); ok && magic != replayMagic && len(v) < 4 {
		// A file of an older version comes from an older commit, which
		// its own code replays: this one would diverge anyway.
		commit := "unknown"
		if _, after, ok := strings.Cut(text, "\ncommit "); ok {
			commit, _, _ = strings.Cut(after, "\n")
		}
		return nil, fmt.Errorf("an older replay file (v%s), from commit %s: replay it there (git checkout %s)", v, clip(commit, 40), clip(commit, 40))
	}
	if magic != replayMagic {
		if strings.HasPrefix(magic, "windtunnel decisions v1") {
			return nil, fmt.Errorf("an old (v1) decision file: it does not hold the run's settings; re-run the failing seed to write a v2 replay file")
		}
		return nil, fmt.Errorf("not a replay file: its first line is %q, want %q", clip(magic, 40), replayMagic)
	}
	rf := &replayFile{}
	var n int
	nChoices := -1 // "seed"
	nOps, nFaults := 0, 0
	var tasks []string // keeptasks: the task table
	for i, key := range keys {
		l, ok := line()
		if !ok {
			return nil, fmt.Errorf("the header ends before %q", key)
		}
		k, v, _ := strings.Cut(l, " ")
		if k != key {
			return nil, fmt.Errorf("header line %d is %q, want the %q line", i+2, clip(l, 40), key)
		}
		var err error
		switch key {
		case "test":
			if v == "" || strings.ContainsAny(v, " \t") {
				err = fmt.Errorf("bad test name %q", clip(v, 40))
			}
			rf.Test = v
		case "package":
			if v == unknownPackage {
				break
			}
			if !strings.HasPrefix(v, ".") || strings.ContainsAny(v, " \t") || len(v) > 200 {
				err = fmt.Errorf("bad package %q (want a path relative to the module root, like ./scenarios/oc)", clip(v, 40))
			}
			rf.Package = v
		case "mutant":
			id, cat, hasCat := strings.Cut(v, " ")
			switch {
			case id == "" || len(v) > 1000:
				err = fmt.Errorf("bad mutant %q", clip(v, 40))
			case id == "none" && !hasCat:
			case hasCat:
				rf.Mutant = id
				if rf.Catalogue, err = strconv.Unquote(cat); err != nil {
					err = fmt.Errorf("the mutant's file %q is not quoted", clip(cat, 40))
				}
			default:
				rf.Mutant = id
			}
		case "seed":
			rf.Seed, err = ParseSeed(v) // its error quotes a clipped prefix
		case "strategy":
			if len(v) > 200 {
				err = fmt.Errorf("%q is too long for a strategy", clip(v, 24))
			}
			rf.Strategy = v
		case "steptime":
			// The library errors quote the whole value; ours quote a prefix.
			if rf.StepTime, err = time.ParseDuration(v); err != nil {
				err = fmt.Errorf("%q is not a duration", clip(v, 24))
			} else if rf.StepTime < 0 {
				err = fmt.Errorf("negative step time")
			}
		case "maxsteps":
			if rf.MaxSteps, err = strconv.ParseInt(v, 10, 64); err != nil {
				err = fmt.Errorf("%q is not a step count", clip(v, 24))
			} else if rf.MaxSteps < 0 {
				err = fmt.Errorf("negative step limit")
			}
		case "commit":
			if len(v) > 200 {
				err = fmt.Errorf("%q is too long for a commit", clip(v, 24))
			}
			rf.Commit = v
		case "choices":
			if v != "seed" {
				nChoices, err = strconv.Atoi(v)
				if err == nil && (nChoices < 0 || nChoices > maxReplayBytes/4) {
					err = fmt.Errorf("%d choices is out of range", nChoices)
				} else if err != nil {
					err = fmt.Errorf("%q is neither \"seed\" nor a count", clip(v, 20))
				}
			}
		case "keeps":
			switch {
			case v == "seed" && nChoices < 0:
			case v == "seed" || nChoices < 0:
				err = fmt.Errorf("%q with choices %s: both come from the seed or neither", clip(v, 20), map[bool]string{true: "seed", false: "listed"}[nChoices < 0])
			default:
				if _, e := fmt.Sscanf(v, "%d %d", &nOps, &nFaults); e != nil || nOps < 0 || nFaults < 0 || nOps+nFaults > maxReplayBytes {
					err = fmt.Errorf("%q is neither \"seed\" nor two counts", clip(v, 20))
				}
			}
		case "keeptasks":
			switch {
			case v == "seed" && nChoices < 0:
			case v == "seed" || nChoices < 0:
				err = fmt.Errorf("%q with choices %s: both come from the seed or neither", clip(v, 20), map[bool]string{true: "seed", false: "listed"}[nChoices < 0])
			default:
				t, e := strconv.Atoi(v)
				if e != nil || t < 0 || t > maxKeepTasks {
					err = fmt.Errorf("%q is neither \"seed\" nor a task count up to %d", clip(v, 20), maxKeepTasks)
					break
				}
				listed := map[string]bool{}
				for j := range t {
					tl, ok := line()
					name, found := strings.CutPrefix(tl, "task ")
					if !ok || !found {
						err = fmt.Errorf("the header announces %d tasks, line %d is %q, not a task line", t, j+1, clip(tl, 40))
						break
					}
					if name, e = strconv.Unquote(name); e != nil {
						err = fmt.Errorf("task line %d: %q is not a quoted name", j+1, clip(tl, 40))
						break
					}
					if listed[name] {
						// Two entries of one name would key their draws
						// and answers alike (protocol.KeepKey).
						err = fmt.Errorf("task line %d: %q is listed twice", j+1, clip(name, 40))
						break
					}
					listed[name] = true
					tasks = append(tasks, name)
				}
			}
		case "decisions":
			if n, err = strconv.Atoi(v); err != nil {
				err = fmt.Errorf("%q is not a count", clip(v, 24))
			} else if n < 1 || n > maxReplayDecisions {
				err = fmt.Errorf("%d decisions is out of range", n)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("header %q: %v", key, err)
		}
	}
	fields := strings.Fields(text)
	if nChoices >= 0 {
		if len(fields) < nChoices {
			return nil, fmt.Errorf("the header announces %d choices, the file holds %d values in all (truncated?)", nChoices, len(fields))
		}
		rf.Choices = make([]uint64, 0, nChoices)
		for i, f := range fields[:nChoices] {
			v, err := ParseSeed(f)
			if err != nil || !strings.HasPrefix(f, "0x") {
				return nil, fmt.Errorf("choice %d is %q, not a hex value", i+1, clip(f, 24))
			}
			rf.Choices = append(rf.Choices, v)
		}
		fields = fields[nChoices:]
		var bits []bool
		for len(bits) < nOps+nFaults {
			if len(fields) == 0 {
				return nil, fmt.Errorf("the header announces %d Keep answers, the file holds %d (truncated?)", nOps+nFaults, len(bits))
			}
			f := fields[0]
			if strings.Trim(f, "01") != "" {
				return nil, fmt.Errorf("the Keep answers %q are not a run of 0 and 1", clip(f, 24))
			}
			for _, c := range f {
				bits = append(bits, c == '1')
			}
			fields = fields[1:]
		}
		if len(bits) != nOps+nFaults {
			return nil, fmt.Errorf("the header announces %d Keep answers, the file holds %d", nOps+nFaults, len(bits))
		}
		rf.Keeps = protocol.Keeps{Operations: bits[:nOps:nOps], Faults: bits[nOps:]}
		if len(tasks) > 0 {
			total := nChoices + nOps + nFaults
			if len(fields) < total {
				return nil, fmt.Errorf("the header announces %d keyed draws and Keep answers, the file holds %d task indices (truncated?)", total, len(fields))
			}
			keys := [3][]protocol.KeepKey{{}, {}, {}}
			asked := make([][3]int, len(tasks))
			for i, f := range fields[:total] {
				t, err := strconv.Atoi(f)
				if err != nil || t < 0 || t >= len(tasks) {
					return nil, fmt.Errorf("keyed entry %d's task is %q, not one of the %d tasks", i+1, clip(f, 20), len(tasks))
				}
				kind := 0
				switch {
				case i >= nChoices+nOps:
					kind = 2
				case i >= nChoices:
					kind = 1
				}
				keys[kind] = append(keys[kind], protocol.KeepKey{Task: tasks[t], N: asked[t][kind]})
				asked[t][kind]++
			}
			rf.Keeps.ChoiceKeys, rf.Keeps.OperationKeys, rf.Keeps.FaultKeys = keys[0], keys[1], keys[2]
			fields = fields[total:]
		}
	}
	rf.Decisions = make([]int32, 0, min(n, len(fields)))
	for _, f := range fields {
		id, count, isRun := strings.Cut(f, "*")
		k := int64(1)
		if isRun {
			var err error
			if k, err = strconv.ParseInt(count, 10, 64); err != nil || k < 2 {
				return nil, fmt.Errorf("decision %d is %q, not a task id or a run (task*steps, at least 2)", len(rf.Decisions)+1, clip(f, 20))
			}
		}
		if int64(len(rf.Decisions))+k > int64(n) {
			return nil, fmt.Errorf("more than the %d decisions the header announces", n)
		}
		v, err := strconv.ParseInt(id, 10, 32)
		if id == clockToken {
			v, err = int64(sim.ClockDecision), nil
		} else if err != nil || v < 0 {
			return nil, fmt.Errorf("decision %d is %q, not a task id or %s", len(rf.Decisions)+1, clip(f, 20), clockToken)
		}
		for range k {
			rf.Decisions = append(rf.Decisions, int32(v))
		}
	}
	if len(rf.Decisions) != n {
		return nil, fmt.Errorf("the header announces %d decisions, the file holds %d (truncated?)", n, len(rf.Decisions))
	}
	return rf, nil
}

// The corpus: seeds that once failed, one per line ("0x5eed  # note"), in
// testdata/windtunnel/<TopLevelTest>.seeds of the test's package. They are
// replayed before the regular seeds on every run, so a fixed bug stays
// fixed.
const maxCorpusSeeds = 10_000

func corpusPath(topTest string) string {
	return filepath.Join("testdata", "windtunnel", topTest+".seeds")
}

func readCorpus(topTest string) ([]uint64, error) {
	f, err := os.Open(corpusPath(topTest))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCorpus(f, corpusPath(topTest))
}

func parseCorpus(r io.Reader, name string) ([]uint64, error) {
	var seeds []uint64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 4096)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := ParseSeed(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if !slices.Contains(seeds, v) {
			if len(seeds) >= maxCorpusSeeds {
				return nil, fmt.Errorf("%s: more than %d seeds", name, maxCorpusSeeds)
			}
			seeds = append(seeds, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v (a line longer than 4 KiB?)", name, err)
	}
	return seeds, nil
}

func appendCorpus(topTest string, seed uint64, note string) error {
	have, err := readCorpus(topTest)
	if err != nil {
		return err
	}
	if slices.Contains(have, seed) {
		return nil
	}
	p := corpusPath(topTest)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%#x  # %s\n", seed, clip(strings.ReplaceAll(note, "\n", " "), 200))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBits writes Keep answers as runs of 0 and 1, 64 to a line; an
// empty list is an empty line (so the list's end stays visible).
// maxKeepTasks bounds a replay file's task table.
const maxKeepTasks = 1 << 20

// fillKeyGaps returns k with a false answer, keyed, in every gap of a
// task's Keep calls. A keyed replay records no call it answers false
// (sim's decide), so a shrunk run's lists can go from a task's call 3 to
// its call 7. The file names a call by its place in its task's calls, and
// an unlisted call is answered false, so the filled lists replay the same.
// Lists answered by ordinal (no keys) are returned as they are.
func fillKeyGaps(k protocol.Keeps) protocol.Keeps {
	if k.ChoiceKeys == nil {
		return k
	}
	fill := func(list []bool, keys []protocol.KeepKey) ([]bool, []protocol.KeepKey) {
		next := map[string]int{}
		gaps := 0
		for _, key := range keys[:min(len(list), len(keys))] {
			gaps += max(key.N-next[key.Task], 0)
			next[key.Task] = key.N + 1
		}
		if gaps == 0 {
			return list, keys
		}
		outList, outKeys := make([]bool, 0, len(list)+gaps), make([]protocol.KeepKey, 0, len(keys)+gaps)
		clear(next)
		for i, key := range keys[:min(len(list), len(keys))] {
			for n := next[key.Task]; n < key.N; n++ {
				outList, outKeys = append(outList, false), append(outKeys, protocol.KeepKey{Task: key.Task, N: n})
			}
			next[key.Task] = max(next[key.Task], key.N+1)
			outList, outKeys = append(outList, list[i]), append(outKeys, key)
		}
		return outList, append(outKeys, keys[min(len(list), len(keys)):]...)
	}
	k.Operations, k.OperationKeys = fill(k.Operations, k.OperationKeys)
	k.Faults, k.FaultKeys = fill(k.Faults, k.FaultKeys)
	return k
}

// keepTaskTable is a keyed replay's task table for a replay file: the
// tasks in first-use order and each draw's, operation answer's and fault
// answer's task index. The file does not hold the ordinals: each one must
// be its task's count of earlier draws (or answers of the kind), which
// every keyed list of a recorded run (protocol.KeepsOfRun) is. A replay by
// ordinal has no table.
func keepTaskTable(choices int, k protocol.Keeps) ([]string, [3][]int, error) {
	var taskOf [3][]int
	if k.ChoiceKeys == nil {
		return nil, taskOf, nil
	}
	var tasks []string
	index := map[string]int{}
	asked := map[string]*[3]int{}
	lists := [3][]protocol.KeepKey{k.ChoiceKeys, k.OperationKeys, k.FaultKeys}
	lens := [3]int{choices, len(k.Operations), len(k.Faults)}
	for kind, keys := range lists {
		what := [3]string{"choice", "operation", "fault"}[kind]
		if len(keys) < lens[kind] {
			return nil, taskOf, fmt.Errorf("replay file: %d %s answers but %d keys", lens[kind], what, len(keys))
		}
		for _, key := range keys[:lens[kind]] {
			t, ok := index[key.Task]
			if !ok {
				t = len(tasks)
				index[key.Task] = t
				tasks = append(tasks, key.Task)
				asked[key.Task] = &[3]int{}
			}
			if a := asked[key.Task]; key.N != a[kind] {
				return nil, taskOf, fmt.Errorf("replay file: the %s answers of task %q are not in its call order (call %d where %d comes next)", what, key.Task, key.N, a[kind])
			}
			asked[key.Task][kind]++
			taskOf[kind] = append(taskOf[kind], t)
		}
	}
	return tasks, taskOf, nil
}

func writeInts(b *bytes.Buffer, v []int) {
	for i, x := range v {
		b.WriteString(strconv.Itoa(x))
		if i%32 == 31 || i == len(v)-1 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
}

func writeBits(b *bytes.Buffer, bits []bool) {
	for i, k := range bits {
		if k {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
		if i%64 == 63 && i != len(bits)-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
}

// Recorded is what a replay file says of the run it holds: the test and
// its package, the seed, and the code it flew. Tools that replay a file
// read it to know where to run it and on which code.
type Recorded struct {
	Test    string // the test that ran the seed, without the seed's subtest
	Package string // relative to the module root; "" in files older than v5
	Seed    uint64
	// Mutant is the mutant the run flew ("" for the checkout's code), and
	// Catalogue the file it comes from ("" for the project's catalogue).
	Mutant, Catalogue string
}

// ReadRecorded reads a replay file's description of its run.
func ReadRecorded(path string) (Recorded, error) {
	rf, err := readReplay(path)
	if err != nil {
		return Recorded{}, err
	}
	return Recorded{Test: rf.Test, Package: rf.Package, Seed: rf.Seed, Mutant: rf.Mutant, Catalogue: rf.Catalogue}, nil
}

// RunPattern is the go test -run pattern that selects exactly the test
// name (a subtest path such as "TestX/seed=0x1").
func RunPattern(name string) string {
	return strings.ReplaceAll("^"+regexpQuote(name)+"$", "/", "$/^")
}

// Package docs_test holds the project's user documentation (README.md at the
// module root and the pages of docs/) to what it says: every shell command
// it shows runs, and the README stays a short user's guide.
//
// The convention: a shell command goes in a fenced block marked ```sh, one
// command a line; Go code goes in ```go blocks and program output in ```text
// blocks, which are not run. Every fence names its language. A command is
// expected to exit 0, unless its line ends with a comment starting
// "# fails:" (a replay of a failing run: its failing is the point). Commands
// run at the module root, with OUT (the Makefile's output directory) set to
// a temporary directory in the environment, and a path under out/ in the
// command read from there, so that the checkout is left as it was.
//
// Commands too long for a test, or that make test runs in a stage of its
// own, are listed in special by their exact text; a command not listed
// there runs as written.
package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// root is the module root, where every command runs.
const root = ".."

// maxReadmeLines bounds README.md: it is a user's guide; internals go to docs/.
const maxReadmeLines = 250

// commandTimeout bounds one command.
const commandTimeout = 6 * time.Minute

// How a special command is handled.
type special struct {
	// tiny, if set, is run instead of the command: the same command at a
	// size a test can afford.
	tiny string
	// stage, if set, names the stage of make test that runs the command (or
	// what it needs: services make test starts); the test checks that make
	// test really has that stage instead of running it.
	stage string
	// self: the command is make test itself, which runs this test.
	self bool
}

// specials is keyed by the exact text of a command in a ```sh block. An
// entry no document uses fails the test, so the table cannot go stale.
var specials = map[string]special{
	// The whole audit: the walk-through's narrowed audit of OC-2's checks
	// and one mutant instead.
	"make sim":           {tiny: "make sim SEEDS=20 MUTANT_SEEDS=10 RUN='^TestOC2_' ONLY=oc-no-age-check"},
	"make audit":         {tiny: "make audit AUDIT_SEEDS=20 MUTANT_SEEDS=10 RUN='^TestOC2_' ONLY=oc-no-age-check"},
	"make race-families": {tiny: "make race-families FAMILIES=./scenarios/lf"},
	"make determinism":   {tiny: "make determinism FAMILIES=./scenarios/lf"},
	"make bugbench":      {tiny: "make bugbench BUGBENCH_SEEDS=100 BUGBENCH_WALL=200ms BUGBENCH_MUTANTS=ms-publish-unconditionally BUGBENCH_RACE=false"},
	"make goker":         {tiny: "make goker GOKER_SEEDS=5 GOKER_STRATEGIES=random GOKER_REAL=1 GOKER_RUN=Etcd6857"},
	"make mutation":      {tiny: "make mutation MUTATION_TARGETS=impl/logfilter MUTATION_SAMPLE=2 MUTATION_SEEDS=2"},
	"make fuzz":          {tiny: "make fuzz FUZZ=./impl/logfilter:FuzzParse FUZZTIME=200x"},
	// Needs a Slurm cluster: make test's stage starts one and runs a sweep.
	"make sweep-slurm SEEDS=1000 SHARDS=16": {stage: "sweep-slurm-test"},
	"make test":                             {self: true},
	"make vet":                              {stage: "vet"},
	"make unit":                             {stage: "unit"},
	"make docs":                             {stage: "docs"},
	"make race":                             {stage: "race"},
	"make integration":                      {stage: "integration"},
	"make browser-test":                     {stage: "browser-test"},
	"make sweep-slurm-test":                 {stage: "sweep-slurm-test"},
	"make audit-quick":                      {stage: "audit-quick"},
	// Needs a PostgreSQL and a Redis server: make integration starts both
	// and runs these tests on them.
	"WINDTUNNEL_PG_URL='postgres://user:pass@host:5432/db?sslmode=disable' WINDTUNNEL_REDIS_ADDR='host:6379' go test -v -count=1 ./impl/edge/...": {stage: "integration"},
	// Needs PostgreSQL, Redis and Toxiproxy: make integration starts all
	// three and flies a short flight (TestShortFlight) on them.
	"make flight": {stage: "integration"},
}

// README.md says what some commands print (the walk-through of "A failing
// seed" above all); prints holds each such command, by its exact text, to
// the lines the README quotes. An entry no document uses fails the test.
var prints = map[string][]string{
	"make sim SEEDS=20 MUTANT_SEEDS=10 RUN='^TestOC2_' ONLY=oc-no-age-check": {
		"oc-no-age-check", "caught after 1 seed(s) by TestOC2_SharedReadEndingOverAgedOpenSet (seed 0x503cb0b683b7a4ed:",
		"reproduce: make replay MUTANT=oc-no-age-check PKG=./scenarios/oc TEST=TestOC2_SharedReadEndingOverAgedOpenSet SEED=0x503cb0b683b7a4ed",
	},
	"make replay MUTANT=oc-no-age-check PKG=./scenarios/oc TEST=TestOC2_SharedReadEndingOverAgedOpenSet SEED=0x503cb0b683b7a4ed": {
		"windtunnel failure", "grant-staleness 4.877165766s breaks < 1s", "trace tail", "code       mutant oc-no-age-check",
		"reproduce:", "shrink it to a minimal run", "replay the recorded run", "Error 1",
	},
	"make shrink MUTANT=oc-no-age-check PKG=./scenarios/oc TEST=TestOC2_SharedReadEndingOverAgedOpenSet SEED=0x503cb0b683b7a4ed": {
		"done: 3 operations, 1 faults, 0 preemptions", "scenario: 3 operations on 2 tasks",
		"done (the shrunk run still fails, as it must)",
	},
	"cat out/shrink/mutant=oc-no-age-check/TestOC2_SharedReadEndingOverAgedOpenSet_seed=0x503cb0b683b7a4ed/shrunk/interleaving.txt": {
		"scenario: 3 operations on 2 tasks",
		"pod1 client 0: accessible k1 r1 -> 6 channels",
		"pod0 client 0: make-private k1 o1 -> committed",
		"pod1 client 1: accessible k1 n3 -> 6 channels",
		"db: commit #1 make-private o1",
		"^ made read #1 stale (grant-staleness 1s of oc/k1/n3/o1)",
		"#1 LOST for pod1 #1 from pod0",
		"^ grant-staleness 1s ≥ 1s: read #1 oc/k1/n3/o1",
	},
	"make try-mutants MUTANTS=docs/example-mutants.json": {
		"granted-member-half-only", "caught after 1 seed(s) by TestOC1_UnionMatchesUncached (seed 0x97cccf60a7ad0804:",
		"reproduce: make replay MUTANT=granted-member-half-only MUTANTS=", "1 caught, 0 survived",
	},
	"go test ./scenarios/oc -run '^TestOC10_' -v": {"claim OC-10: holds: measured 0 cross-community grants in", "over 20 seeds"},
}

// docCommand is one command of a document.
type docCommand struct {
	file  string
	line  int
	text  string // the command, without its trailing comment
	fails bool   // annotated "# fails:": expected to exit non-zero
}

// documents are README.md and every page of docs/.
func documents(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages in docs/")
	}
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

var fence = regexp.MustCompile("^(\\s*)```(.*)$")

// reporter is what the checks report to: a *testing.T, or in
// TestTheCheckCatchesWrongDocuments a recorder.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// commands parses a document's ```sh blocks.
func commands(t reporter, file string) []docCommand {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	defer f.Close()
	var out []docCommand
	in, lang := false, ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fence.FindStringSubmatch(line); m != nil {
			if in {
				in = false
				continue
			}
			in, lang = true, strings.TrimSpace(m[2])
			if lang == "" {
				t.Errorf("%s:%d: a code fence without a language: mark shell commands ```sh, Go ```go, output ```text", file, n)
			}
			if lang == "shell" || lang == "console" || lang == "bash" {
				t.Errorf("%s:%d: ```%s: the documents mark shell commands ```sh, which this test runs", file, n, lang)
			}
			continue
		}
		if !in || lang != "sh" {
			continue
		}
		text := strings.TrimSpace(line)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		c := docCommand{file: file, line: n, text: text}
		if i := strings.Index(text, " # "); i >= 0 {
			comment := strings.TrimSpace(text[i+3:])
			c.text = strings.TrimSpace(text[:i])
			c.fails = strings.HasPrefix(comment, "fails:")
		}
		if strings.HasSuffix(c.text, "\\") {
			t.Errorf("%s:%d: a command continued on the next line: write each command on one line", file, n)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	if in {
		t.Errorf("%s: a code fence is never closed", file)
	}
	return out
}

// makeTestStages reads the stages make test runs: the Makefile's test
// target hands them to scripts/test-stages.sh as quoted lists.
func makeTestStages(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "test:") {
			continue
		}
		for _, r := range lines[i+1:] {
			if !strings.HasPrefix(r, "\t") {
				break
			}
			if !strings.Contains(r, "scripts/test-stages.sh") {
				continue
			}
			var stages []string
			for _, q := range regexp.MustCompile(`"([^"$]*)"`).FindAllStringSubmatch(r, -1) {
				stages = append(stages, strings.Fields(q[1])...)
			}
			if len(stages) == 0 {
				t.Fatalf("Makefile: make test's recipe names no stages: %s", r)
			}
			return stages
		}
	}
	t.Fatal("Makefile: no test target running scripts/test-stages.sh")
	return nil
}

// underOut makes a path under out/ in a command read from OUT.
var underOut = regexp.MustCompile(`(^|[\s='"])out/`)

func TestEveryDocCommandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of README.md and docs/: minutes")
	}
	var all []docCommand
	for _, d := range documents(t) {
		all = append(all, commands(t, d)...)
	}
	if len(all) < 5 {
		t.Fatalf("found only %d commands in README.md and docs/", len(all))
	}
	runCommands(t, all, specials, prints, makeTestStages(t), root, t.TempDir())
}

// runCommands runs the documents' commands in dir, with OUT set to out,
// and checks each against the document: its exit status, what it prints,
// and for a command make test runs in a stage, that make test has the
// stage.
func runCommands(t reporter, all []docCommand, specials map[string]special, prints map[string][]string, stages []string, dir, out string) {
	t.Helper()
	used := map[string]bool{}
	type result struct {
		err    error
		output string
	}
	ran := map[string]result{}
	env := []string{"OUT=" + out}
	for _, e := range os.Environ() {
		// A make that started this test passes its own settings down; the
		// commands are run as a user runs them.
		name, _, _ := strings.Cut(e, "=")
		if name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" || name == "OUT" {
			continue
		}
		env = append(env, e)
	}
	for _, c := range all {
		where := fmt.Sprintf("%s:%d", c.file, c.line)
		run := c.text
		if s, ok := specials[c.text]; ok {
			used[c.text] = true
			switch {
			case s.self:
				if c.text != "make test" {
					t.Errorf("%s: %q is marked as make test itself", where, c.text)
				}
				t.Logf("%s: %s: make test itself, which runs this test", where, c.text)
				continue
			case s.stage != "":
				if !slices.Contains(stages, s.stage) {
					t.Errorf("%s: %q is said to be run by make test's stage %q, but make test's stages are %v", where, c.text, s.stage, stages)
				} else {
					t.Logf("%s: %s: run by make test's stage %s", where, c.text, s.stage)
				}
				continue
			case s.tiny != "":
				run = s.tiny
			}
		}
		run = underOut.ReplaceAllString(run, "${1}"+out+"/")
		r, done := ran[run]
		if !done {
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			cmd := exec.CommandContext(ctx, "bash", "-c", run)
			cmd.Dir, cmd.Env = dir, env
			cmd.WaitDelay = 10 * time.Second
			start := time.Now()
			b, err := cmd.CombinedOutput()
			if ctx.Err() == context.DeadlineExceeded {
				err = fmt.Errorf("timed out after %v: %w", commandTimeout, err)
			}
			cancel()
			r = result{err: err, output: string(b)}
			ran[run] = r
			t.Logf("%s: %s (%.1fs, %v)", where, run, time.Since(start).Seconds(), err)
		}
		// One error per command, with every way it differs from the
		// document and the end of its output once.
		var wrong []string
		switch {
		case c.fails && r.err == nil:
			wrong = append(wrong, "exited 0, but the document says it fails")
		case !c.fails && r.err != nil:
			wrong = append(wrong, fmt.Sprintf("%v, but the document says it succeeds (mark it \"# fails: ...\" if it should fail)", r.err))
		}
		if want, ok := prints[c.text]; ok {
			used[c.text] = true
			for _, w := range want {
				if !strings.Contains(r.output, w) {
					wrong = append(wrong, fmt.Sprintf("the document says it prints %q", w))
				}
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s: %s: %s; it printed:\n%s", where, run, strings.Join(wrong, "; "), tail(r.output))
		}
	}
	for text := range specials {
		if !used[text] {
			t.Errorf("specials lists %q, which no ```sh block of README.md or docs/ has: remove it", text)
		}
	}
	for text := range prints {
		if !used[text] {
			t.Errorf("prints lists %q, which no ```sh block of README.md or docs/ has: remove it", text)
		}
	}
}

// tail is the end of a command's output, enough to see why it failed.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 60 {
		lines = append([]string{"…"}, lines[len(lines)-60:]...)
	}
	return strings.Join(lines, "\n")
}

var claimRow = regexp.MustCompile(`(?m)^\| ([A-Z]{2}-[0-9]+) \|`)

// claimCount counts the claims of CLAIMS.md: the rows of its tables.
func claimCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scenarios/claims/CLAIMS.md"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range claimRow.FindAllStringSubmatch(string(b), -1) {
		if ids[m[1]] {
			t.Errorf("CLAIMS.md lists %s twice", m[1])
		}
		ids[m[1]] = true
	}
	if len(ids) < 10 {
		t.Fatalf("found only %d claims in CLAIMS.md", len(ids))
	}
	return len(ids)
}

var claimsStated = regexp.MustCompile(`\b([0-9]+) claims\b`)

func TestReadmeIsAShortGuide(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move internals to docs/", n, maxReadmeLines)
	}
	if strings.Contains(readme, "../shared/") {
		t.Errorf("README.md points at ../shared/, which a clone does not have (CLAIMS.md is scenarios/claims/CLAIMS.md)")
	}
	want := claimCount(t)
	for _, d := range documents(t) {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range claimsStated.FindAllStringSubmatch(string(b), -1) {
			if n, _ := strconv.Atoi(m[1]); n != want && n > 5 {
				t.Errorf("%s says %q; CLAIMS.md lists %d claims", d, m[0], want)
			}
		}
	}
}

// TestEveryLinkedPageExists: a relative link of README.md or a docs page
// names a file of the checkout.
func TestEveryLinkedPageExists(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, d := range documents(t) {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(d), m[1])); err != nil {
				t.Errorf("%s links to %s, which does not exist", d, m[1])
			}
		}
	}
}

// recorder is a reporter that keeps what it is told.
type recorder struct{ errors, logs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// TestTheCheckCatchesWrongDocuments: the checks of TestEveryDocCommandRuns
// fail a document whose command exits otherwise than it says, prints
// other than it says, or is said to run in a stage make test does not
// have; a fence without a language; and a table entry no document uses.
// A path under out/ reads from OUT.
func TestTheCheckCatchesWrongDocuments(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	page := filepath.Join(dir, "page.md")
	doc := "# A page\n\n```sh\ntrue\nfalse\ntrue   # fails: says it fails\nfalse  # fails: as recorded\n" +
		"make pretend\nprintf hello > out/x.txt\ncat out/x.txt\n```\n\n```\nno language\n```\n\n```go\nnot run\n```\n"
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	all := commands(r, page)
	if len(all) != 7 {
		t.Fatalf("parsed %d commands, want 7: %+v", len(all), all)
	}
	runCommands(r, all,
		map[string]special{"make pretend": {stage: "no-such-stage"}, "make unused": {tiny: "true"}},
		map[string][]string{"cat out/x.txt": {"hello", "goodbye"}},
		[]string{"vet", "unit"}, dir, out)
	want := []string{
		"page.md:13: a code fence without a language",
		`page.md:5: false: exit status 1, but the document says it succeeds`,
		`page.md:6: true: exited 0, but the document says it fails`,
		`"make pretend" is said to be run by make test's stage "no-such-stage"`,
		`the document says it prints "goodbye"`,
		`specials lists "make unused"`,
	}
	for _, w := range want {
		if !slices.ContainsFunc(r.errors, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("no error says %q; the errors:\n%s", w, strings.Join(r.errors, "\n"))
		}
	}
	if len(r.errors) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(r.errors), len(want), strings.Join(r.errors, "\n"))
	}
	if b, err := os.ReadFile(filepath.Join(out, "x.txt")); err != nil || string(b) != "hello" {
		t.Errorf("out/x.txt was not written under OUT: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a command wrote under the directory's own out/")
	}
}

// TestTheSettingsPageListsEverySetting: docs/settings.md has a row for
// every -sim.* flag sim/simtest registers, and none for a flag it does not.
func TestTheSettingsPageListsEverySetting(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "sim/simtest/settings.go"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("settings.md")
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, m := range regexp.MustCompile(`flag\.[A-Za-z0-9]+\((?:&[A-Za-z]+, )?"(sim\.[a-z.]+)"`).FindAllStringSubmatch(string(src), -1) {
		registered[m[1]] = true
	}
	if len(registered) < 10 {
		t.Fatalf("found only %d flags in sim/simtest/settings.go: %v", len(registered), registered)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `-(sim\\.[a-z.]+)[=`]").FindAllStringSubmatch(string(page), -1) {
		listed[m[1]] = true
	}
	for f := range registered {
		if !listed[f] {
			t.Errorf("docs/settings.md has no row for -%s", f)
		}
	}
	for f := range listed {
		if !registered[f] {
			t.Errorf("docs/settings.md lists -%s, which sim/simtest does not register", f)
		}
	}
}

// TestTheTargetsPageListsEveryTarget: docs/targets.md has a row for every
// target of the Makefile, and none for a target it does not have.
func TestTheTargetsPageListsEveryTarget(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("targets.md")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	if len(targets) < 10 {
		t.Fatalf("found only %d targets in the Makefile: %v", len(targets), targets)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `make ([a-z][a-z-]*)").FindAllStringSubmatch(string(page), -1) {
		listed[m[1]] = true
	}
	for target := range targets {
		if !listed[target] {
			t.Errorf("docs/targets.md has no row for make %s", target)
		}
	}
	for target := range listed {
		if !targets[target] {
			t.Errorf("docs/targets.md lists make %s, which the Makefile does not have", target)
		}
	}
}

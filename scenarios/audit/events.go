package audit

import (
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
)

// The audit reads its test processes through go test -json's events (go
// doc cmd/test2json), not through their text. Which test failed, which
// package did not build or ran no test, which test was still running when
// a hang ran out: these are fields of events. Lines of text could be
// imitated by a test's own output, or broken by a change of go test's
// wording. The
// text the events carry is kept for people (output.txt).

// testEvent is one event of go test -json (cmd/test2json's TestEvent, less
// its Time, which the audit does not read).
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
	// ImportPath names the package of a build-output or build-fail
	// event, which has no Package.
	ImportPath string
}

// Bounds on what a testRun keeps: a test that prints without end must not
// take the audit's memory or disk with it.
const (
	maxEventLine = 1 << 20  // a longer line is taken as it is, as text
	maxRunText   = 16 << 20 // text kept per testRun; the rest is counted
	maxRunEvents = 64 << 20 // raw events written per testRun
)

// testRun reads the go test -json event streams of one test process, or of
// several one after another (a Race mutant's runs), as they are written to
// it, and keeps what the audit judges by: the tests that failed, how each
// package ended, and the text of the output.
type testRun struct {
	// progress, when set, gets each progress line: claim records, top-level
	// test results, package results and panics, as go test -v prints them.
	progress func(string)
	// raw, when set, gets every line as it came (events.jsonl), up to
	// maxRunEvents bytes.
	raw     io.Writer
	rawSent int
	// watch is a test whose pass watchPassed records (controlAfter).
	watch       string
	watchPassed bool

	text    bytes.Buffer // the Output of the events, and any line that is no event
	textCut int          // bytes of text past maxRunText, not kept
	pending []byte       // a line not yet ended

	// The stream being read: its package and the tests of it that started
	// and did not end, in start order (a hang names the first).
	stream     bool // a stream started and has not ended
	pkg        string
	running    []string
	ran        bool     // a test started
	topFailed  []string // top-level tests that failed
	anyFailed  bool
	pkgBuildKO bool // its build failed (build-fail)

	// Over every stream read.
	failed      []string // as RunClaims reports them: "pkg Test", "pkg: does not build", ...
	packages    int      // package results read
	buildFailed bool
	noTests     bool // a package passed without starting a test
	firstFail   string
	hang        string // the catch of a hang, when one ran out
	raced       bool   // the race detector reported
	raceTest    string // the test whose output holds its first report
	panicMsg    string
	// raceCaught and raceMissed count a Race mutant's runs (raceRuns).
	raceCaught, raceMissed int
}

// Write takes the stream's bytes as they come and reads each whole line.
func (t *testRun) Write(b []byte) (int, error) {
	t.pending = append(t.pending, b...)
	for {
		i := bytes.IndexByte(t.pending, '\n')
		if i < 0 {
			if len(t.pending) > maxEventLine {
				t.line(t.pending)
				t.pending = t.pending[:0]
			}
			return len(b), nil
		}
		t.line(t.pending[:i])
		t.pending = t.pending[i+1:]
	}
}

// finish reads a last line without its newline and ends the last stream.
func (t *testRun) finish() {
	if len(t.pending) > 0 {
		t.line(t.pending)
		t.pending = nil
	}
	t.endStream()
}

func (t *testRun) line(l []byte) {
	if t.raw != nil && t.rawSent+len(l) < maxRunEvents {
		t.rawSent += len(l) + 1
		t.raw.Write(append(l[:len(l):len(l)], '\n'))
	}
	var e testEvent
	if len(l) == 0 || l[0] != '{' || json.Unmarshal(l, &e) != nil || e.Action == "" {
		// Not an event: the go command's own words (a flag or an overlay
		// it refused), kept for people.
		t.addText(string(l) + "\n")
		return
	}
	t.event(e)
}

func (t *testRun) addText(s string) {
	if room := maxRunText - t.text.Len(); room < len(s) {
		t.text.WriteString(s[:max(room, 0)])
		t.textCut += len(s) - max(room, 0)
		return
	}
	t.text.WriteString(s)
}

// note adds a line of the audit's own to the text (a Race mutant's run
// marks, a build's error).
func (t *testRun) note(s string) { t.addText(s + "\n") }

func (t *testRun) event(e testEvent) {
	switch e.Action {
	case "start":
		t.endStream()
		t.stream, t.pkg = true, e.Package
	case "build-output":
		t.addText(e.Output)
	case "build-fail":
		t.pkgBuildKO, t.buildFailed = true, true
	case "output":
		t.addText(e.Output)
		t.readOutput(e)
	case "run":
		if len(t.running) < maxRunning {
			t.running = append(t.running, e.Test)
		}
		t.ran = true
	case "pass", "fail", "skip":
		if e.Test == "" {
			t.endPackage(e)
			return
		}
		t.endTest(e)
	}
}

// maxRunning bounds the tests a stream tracks as running at once: parents
// and their parallel subtests, far fewer in the audit's checks.
const maxRunning = 4096

// readOutput reads what a hang, a data race or a panic leaves in the output,
// which no event of its own marks, and passes on progress lines.
func (t *testRun) readOutput(e testEvent) {
	l := strings.TrimSpace(e.Output)
	if limit, ok := strings.CutPrefix(l, "panic: test timed out after "); ok && t.hang == "" {
		// go test's own -timeout: the tests still running hung. The first
		// to start is the top-level one, as go test lists it first.
		name := "a test"
		if len(t.running) > 0 {
			name = t.running[0]
		}
		t.hang = fmt.Sprintf("%s (a hang: still running when the %s limit ran out)", name, limit)
	}
	if !t.raced && strings.Contains(e.Output, "WARNING: DATA RACE") {
		t.raced, t.raceTest = true, e.Test
	}
	if msg, ok := strings.CutPrefix(l, "panic: "); ok && t.panicMsg == "" {
		t.panicMsg = msg
	}
	if strings.HasPrefix(l, "claim ") || strings.Contains(l, "claim_test.go") || strings.Contains(l, ": claim ") || strings.HasPrefix(l, "panic:") {
		t.say(l)
	}
}

func (t *testRun) endTest(e testEvent) {
	if i := lastIndex(t.running, e.Test); i >= 0 {
		t.running = append(t.running[:i], t.running[i+1:]...)
	}
	if e.Action == "pass" && e.Test == t.watch {
		t.watchPassed = true
	}
	top := !strings.Contains(e.Test, "/")
	if e.Action == "fail" {
		t.anyFailed = true
		if t.firstFail == "" {
			t.firstFail = e.Test
		}
		if top {
			t.topFailed = append(t.topFailed, e.Test)
		}
	}
	if top {
		t.say(fmt.Sprintf("--- %s: %s (%.2fs)", strings.ToUpper(e.Action), e.Test, e.Elapsed))
	}
}

func lastIndex(s []string, v string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// endPackage reads a package's result: the stream's last event.
func (t *testRun) endPackage(e testEvent) {
	t.packages++
	pkg := e.Package
	switch {
	case e.Action == "fail" && (e.FailedBuild != "" || t.pkgBuildKO):
		t.buildFailed = true
		t.failed = append(t.failed, pkg+": does not build")
		t.say("FAIL\t" + pkg + " [build failed]")
	case e.Action == "fail":
		if len(t.topFailed) == 0 {
			t.failed = append(t.failed, pkg+": failed without a failing test (a crash or a timeout)")
		}
		for _, name := range t.topFailed {
			t.failed = append(t.failed, pkg+" "+name)
		}
		if t.anyFailed {
			t.say("FAIL")
		}
		t.say(fmt.Sprintf("FAIL\t%s\t%.3fs", pkg, e.Elapsed))
	default:
		if !t.ran {
			t.noTests = true
		}
		t.say(fmt.Sprintf("ok  \t%s\t%.3fs", pkg, e.Elapsed))
	}
	t.resetStream()
}

// endStream ends a stream that stopped before its package's result: its
// failed tests are kept, under no package.
func (t *testRun) endStream() {
	if t.stream {
		for _, name := range t.topFailed {
			t.failed = append(t.failed, "? "+name)
		}
	}
	t.resetStream()
}

func (t *testRun) resetStream() {
	t.stream, t.pkg, t.running, t.ran, t.topFailed, t.anyFailed, t.pkgBuildKO = false, "", nil, false, nil, false, false
}

// buildFailure records that pkg's test binary did not build, with go's
// output, as go test -json reports it.
func (t *testRun) buildFailure(pkg, out string) {
	t.endStream()
	t.addText(strings.TrimRight(out, "\n") + "\n")
	t.endPackage(testEvent{Action: "fail", Package: pkg, FailedBuild: pkg})
}

func (t *testRun) say(l string) {
	if t.progress != nil {
		t.progress(l)
	}
}

// catch names what made a mutant's checks fail, when no seed's failure
// does. That is a hang; the first failing test; a data race that ended the
// process before any test failed; or a panic on a goroutine of the test's.
// A test is named by its name alone: two runs of the same mutant, compared
// by audit -verify-schemata, must read the same.
func (t *testRun) catch() string {
	switch {
	case t.hang != "":
		return t.hang
	case t.firstFail != "":
		return t.firstFail
	case t.raced && t.raceTest != "":
		return t.raceTest + " (a data race the race detector reported: see output.txt)"
	case t.raced:
		return "a data race the race detector reported (see output.txt)"
	case t.panicMsg != "":
		return "a panic: " + oneLine(t.panicMsg, 80) + " (see output.txt)"
	}
	return "a failing test (see output.txt)"
}

// output is the text of the events, with a last line saying how much did
// not fit.
func (t *testRun) output() []byte {
	if t.textCut == 0 {
		return t.text.Bytes()
	}
	return fmt.Appendf(bytes.Clone(t.text.Bytes()), "\n[audit: %d more bytes of output not kept]\n", t.textCut)
}

// test2json is the path of the go command's test2json, built once by go
// tool if it is not yet.
var test2json = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "test2json").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n test2json: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// runBinary runs a compiled test binary of pkg as go test -json runs one:
// in the package's directory, with -test.v=test2json, its output turned
// into events by test2json, and go test's result line for the package
// added at its end (test2json reads a crash's failure from it). The
// binary, not test2json, is the process ctx ends: test2json ends when its
// input does. The error is the binary's.
func (r Runner) runBinary(ctx context.Context, out io.Writer, pkg string, env []string, bin string, args ...string) error {
	conv, err := test2json()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	path := r.importPath(pkg)
	c := exec.Command(conv, "-t", "-p", path) // -t: the package's result holds its time
	c.Stdin, c.Stdout, c.Stderr = pr, out, out
	err = c.Start()
	pr.Close() // test2json holds its own end
	if err != nil {
		pw.Close()
		return err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-test.v=test2json"}, args...)...)
	cmd.Dir = filepath.Join(r.Root, pkg)
	w := &endWriter{w: pw}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = env
	// A process the binary started and left holding its output must not
	// hold the audit past the binary's end.
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	secs := time.Since(start).Seconds()
	if w.last != '\n' && w.last != 0 {
		fmt.Fprintln(pw) // the result line starts a line of its own
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		fmt.Fprintf(pw, "ok  \t%s\t%.3fs\n", path, secs)
	case errors.As(runErr, &exitErr):
		// Marked as a framing line, as go test marks it: a binary that
		// crashed or hung printed no result of its own.
		fmt.Fprintf(pw, "\x16FAIL\t%s\t%.3fs\n", path, secs)
	}
	pw.Close()
	if err := c.Wait(); err != nil && runErr == nil {
		return fmt.Errorf("test2json: %v", err)
	}
	return runErr
}

// endWriter passes writes on and keeps the last byte written.
type endWriter struct {
	w    io.Writer
	last byte
}

func (e *endWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		e.last = b[len(b)-1]
	}
	return e.w.Write(b)
}

// withEnv is the audit's environment with env added.
func withEnv(env map[string]string) []string {
	out := os.Environ()
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

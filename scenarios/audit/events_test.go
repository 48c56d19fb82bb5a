package audit

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateStreams = flag.Bool("update", false, "record testdata/events/streams again from the events fixture")

const eventsPkg = "github.com/windtunnel/windtunnel/scenarios/audit/testdata/events"

// eventCases are the ways a test process ends, each a test of the events
// fixture run alone (-run) with go test's -timeout at 1s.
var eventCases = []struct{ name, run string }{
	{"pass", "^TestPass$"},
	{"subtest", "^TestSubFails$"},
	{"timeout", "^TestSleeps$"},
	{"panic", "^TestPanics$"},
	{"none", "^TestNone$"},
}

// streamFile is a recorded event stream: a case as go test -json wrote it
// ("go-"), as runBinary wrote it from the fixture's compiled test binary
// ("bin-"), or a package that does not build ("go-build").
func streamFile(name string) string {
	return filepath.Join("testdata", "events", "streams", name+".jsonl")
}

// recordStreams runs the fixture and writes its streams (-update).
func recordStreams(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(streamFile("x")), 0o755))
	goTest := func(name string, args ...string) {
		cmd := exec.Command("go", append([]string{"test", "-json", "-count=1", "-timeout", "1s"}, args...)...)
		cmd.Dir = root
		out, _ := cmd.Output() // a failing case exits 1
		require.NoError(t, os.WriteFile(streamFile(name), out, 0o644))
	}
	for _, c := range eventCases {
		goTest("go-"+c.name, "-run", c.run, "./scenarios/audit/testdata/events")
	}
	goTest("go-build", "./scenarios/audit/testdata/events/build")

	_, bin := buildFixture(t, "./scenarios/audit/testdata/events")
	r := Runner{Root: root}
	for _, c := range eventCases {
		var out bytes.Buffer
		_ = r.runBinary(context.Background(), &out, "./scenarios/audit/testdata/events", os.Environ(), bin, "-test.run="+c.run, "-test.count=1", "-test.timeout=1s")
		require.NoError(t, os.WriteFile(streamFile("bin-"+c.name), out.Bytes(), 0o644))
	}
}

// readStreams feeds the named recorded streams, one after another, to a
// testRun, in pieces that split lines, as a pipe does.
func readStreams(t *testing.T, names ...string) (*testRun, []string) {
	t.Helper()
	var progress []string
	run := &testRun{progress: func(l string) { progress = append(progress, l) }}
	for _, name := range names {
		data, err := os.ReadFile(streamFile(name))
		require.NoError(t, err)
		for len(data) > 0 {
			n := min(len(data), 37)
			_, _ = run.Write(data[:n])
			data = data[n:]
		}
	}
	run.finish()
	return run, progress
}

// TestRecordedEventStreams: the audit reads each way a test process ends
// from its events alone. It reads the same from go test -json as from a
// compiled binary run through test2json (runBinary). The ways are the
// failed tests, a build that failed, a package that ran no test, a hang
// and the test it held, a panic, and the progress lines a user sees. The
// streams are recorded from
// testdata/events: go test -run TestRecordedEventStreams -update.
func TestRecordedEventStreams(t *testing.T) {
	if *updateStreams {
		recordStreams(t)
	}
	for _, mode := range []string{"go", "bin"} {
		t.Run(mode, func(t *testing.T) {
			pass, progress := readStreams(t, mode+"-pass")
			assert.Empty(t, pass.failed)
			assert.Equal(t, 1, pass.packages)
			assert.False(t, pass.buildFailed || pass.noTests)
			require.Len(t, progress, 3)
			assert.Equal(t, "events_test.go:11: claim X-1 holds", progress[0])
			assert.Equal(t, "--- PASS: TestPass (0.00s)", progress[1])
			assert.Regexp(t, `^ok  \t`+eventsPkg+`\t[0-9.]+s$`, progress[2])
			assert.Contains(t, string(pass.output()), "=== RUN   TestPass\n    events_test.go:11: claim X-1 holds\n--- PASS: TestPass (0.00s)\n",
				"output.txt reads as go test -v's output")

			sub, progress := readStreams(t, mode+"-subtest")
			assert.Equal(t, []string{eventsPkg + " TestSubFails"}, sub.failed, "the top-level test, with its package")
			assert.Equal(t, "TestSubFails/seed=0x2", sub.catch(), "the first test that failed, by its name alone")
			require.Len(t, progress, 3, "%q", progress)
			assert.Equal(t, []string{"--- FAIL: TestSubFails (0.00s)", "FAIL"}, progress[:2], "no subtest's line")
			assert.Regexp(t, `^FAIL\t`+eventsPkg+`\t[0-9.]+s$`, progress[2])

			hang, _ := readStreams(t, mode+"-timeout")
			assert.Equal(t, "TestSleeps (a hang: still running when the 1s limit ran out)", hang.catch())
			assert.Equal(t, []string{eventsPkg + ": failed without a failing test (a crash or a timeout)"}, hang.failed)

			panicked, progress := readStreams(t, mode+"-panic")
			assert.Equal(t, "TestPanics", panicked.catch())
			assert.Equal(t, []string{eventsPkg + " TestPanics"}, panicked.failed)
			assert.Contains(t, progress, "panic: assignment to entry in nil map [recovered, repanicked]")

			none, _ := readStreams(t, mode+"-none")
			assert.True(t, none.noTests, "a package that started no test")
			assert.Empty(t, none.failed)
		})
	}

	build, progress := readStreams(t, "go-build")
	assert.True(t, build.buildFailed)
	assert.Equal(t, []string{eventsPkg + "/build: does not build"}, build.failed)
	assert.Equal(t, []string{"FAIL\t" + eventsPkg + "/build [build failed]"}, progress)
	assert.Contains(t, string(build.output()), `cannot use "not a number"`, "go's errors are in the output")
}

// TestFailedTestsAreReadFromTheEvents: the claim phase's streams, one
// package after another, name every failed top-level test with its
// package, and every package that failed without one (a build failure, a
// crash, a timeout); a stream that stopped before its package's result
// keeps its failed tests under no package.
func TestFailedTestsAreReadFromTheEvents(t *testing.T) {
	data, err := os.ReadFile(streamFile("go-subtest"))
	require.NoError(t, err)
	// The subtest stream up to its top-level test's failure: the process
	// stopped there.
	cut := data[:bytes.Index(data, []byte(`"Output":"FAIL\n"`))]
	cut = cut[:bytes.LastIndexByte(cut, '\n')+1]

	run, _ := readStreams(t, "go-pass", "bin-subtest", "go-build", "go-timeout")
	_, _ = run.Write(cut)
	run.finish()
	assert.Equal(t, []string{eventsPkg + " TestSubFails", eventsPkg + "/build: does not build",
		eventsPkg + ": failed without a failing test (a crash or a timeout)", "? TestSubFails"}, run.failed)
}

// catch names what caught a mutant when no seed's failure does: the first
// failing test, a hang, a data race that ended the process before any test
// failed (with the test it happened in, when there is one), or a panic. A
// test is named by its name alone: two runs of one mutant must read the
// same.
func TestTheCatchIsNamedFromTheEvents(t *testing.T) {
	const pkg = `"Package":"p"`
	for _, c := range []struct{ events, want string }{
		{`{"Action":"run",` + pkg + `,"Test":"TestA"}
{"Action":"output",` + pkg + `,"Test":"TestA","Output":"--- FAIL: TestA (1.53s)\n"}
{"Action":"fail",` + pkg + `,"Test":"TestA","Elapsed":1.53}`, "TestA"},
		{`{"Action":"output",` + pkg + `,"Output":"==================\n"}
{"Action":"output",` + pkg + `,"Output":"WARNING: DATA RACE\n"}
{"Action":"output",` + pkg + `,"Output":"panic: runtime error: nil map\n"}`, "a data race the race detector reported (see output.txt)"},
		{`{"Action":"run",` + pkg + `,"Test":"TestA_RaceFree"}
{"Action":"pass",` + pkg + `,"Test":"TestA_RaceFree","Elapsed":0.1}
{"Action":"run",` + pkg + `,"Test":"TestB_RaceFree"}
{"Action":"output",` + pkg + `,"Test":"TestB_RaceFree","Output":"WARNING: DATA RACE\n"}`, "TestB_RaceFree (a data race the race detector reported: see output.txt)"},
		{`{"Action":"output",` + pkg + `,"Output":"panic: boom\n"}
{"Action":"fail",` + pkg + `,"Elapsed":0.1}`, "a panic: boom (see output.txt)"},
		{`{"Action":"fail",` + pkg + `,"Elapsed":0.1}`, "a failing test (see output.txt)"},
		{`{"Action":"output",` + pkg + `,"Output":"--- FAIL: TestImitated (0.00s)\n"}
{"Action":"fail",` + pkg + `,"Elapsed":0.1}`, "a failing test (see output.txt)"},
	} {
		run := &testRun{}
		_, _ = run.Write([]byte(c.events + "\n"))
		run.finish()
		assert.Equal(t, c.want, run.catch(), c.events)
	}
}

// A test that prints without end, or a line without end, is kept only up
// to the bounds.
func TestATestRunKeepsBoundedOutput(t *testing.T) {
	run := &testRun{}
	line := []byte(`{"Action":"output","Package":"p","Output":"` + strings.Repeat("x", 1000) + `\n"}` + "\n")
	for range maxRunText/1000 + 10 {
		_, _ = run.Write(line)
	}
	_, _ = run.Write(bytes.Repeat([]byte("y"), maxEventLine+10))
	run.finish()
	assert.LessOrEqual(t, run.text.Len(), maxRunText)
	assert.Positive(t, run.textCut)
	assert.Contains(t, string(run.output()[len(run.output())-100:]), "more bytes of output not kept")
}

// runBinary ends a binary that runs past its context, and its converter
// with it.
func TestRunBinaryEndsWithItsContext(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	bin := filepath.Join(dir, "sleeper")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho started\nexec sleep 60\n"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	run := &testRun{}
	start := time.Now()
	err := Runner{Root: dir}.runBinary(ctx, run, "./p", os.Environ(), bin)
	run.finish()
	require.Error(t, err)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Equal(t, 1, run.packages, "the result line go test would add")
	assert.Contains(t, string(run.output()), "started")
}

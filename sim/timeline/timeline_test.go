package timeline_test

//lint:file-ignore SA2001 a lock taken and released with nothing between is a scheduling point (and a recorded event) these tests count

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
	"github.com/windtunnel/windtunnel/sim/timeline"
)

// staleRead is a small failing run with everything a timeline draws. The
// reader on pod1 caches k under two locks. The writer on pod2 commits v2 in
// a statement and publishes an invalidation that the bus loses for pod1 and
// delivers twice to pod2. A fault is injected. The second read on pod1, a
// cache hit in no virtual time, answers v1 and is blamed, and so is the
// commit. An idle task only runs and must get no lane. Texts carry markup to
// be escaped.
func staleRead(s *sim.Sim) {
	ctx := context.Background()
	cache := s.NewMutex("cache")
	table := s.NewRWMutex("table")
	wg := s.NewWaitGroup("all")
	wg.Add(3)
	var commit record.EventID
	s.Go("pod1/reader", func() {
		defer wg.Done()
		op := s.OpBegin("read k")
		cache.Lock()
		table.RLock()
		_ = s.Sleep(ctx, time.Millisecond)
		table.RUnlock()
		cache.Unlock()
		s.OpEnd(op, "v1")
		_ = s.Sleep(ctx, 5*time.Millisecond)
		op = s.OpBegin("read k <script>alert(1)</script>")
		cache.Lock()
		cache.Unlock()
		read := s.OpEnd(op, "v1")
		s.Blame(read, "OC-2: read v1 after v2 committed at +3ms")
		s.Blame(commit, "OC-2: this commit made the read stale")
		s.Failf("OC-2: stale read")
	})
	s.Go("pod2/writer", func() {
		defer wg.Done()
		// Half a millisecond in, the reader still holds table: a lock wait.
		_ = s.Sleep(ctx, 500*time.Microsecond)
		op := s.OpBegin("write k=v2")
		table.Lock()
		start := s.Now()
		_ = s.Sleep(ctx, time.Millisecond)
		commit = protocol.Interval(s, start, "conn 1", "UPDATE k SET v=2 (snapshot %s)", start.Sub(sim.Epoch))
		table.Unlock()
		s.OpEnd(op, "ok")
		protocol.Message(s, record.EventSend, 1, "", "invalidate k")
		protocol.Message(s, record.EventLost, 1, "pod1", "dropped by the bus")
		_ = s.Sleep(ctx, 500*time.Microsecond)
		protocol.Message(s, record.EventReceive, 1, "pod2", "delivered (reordered)")
		protocol.Message(s, record.EventReceive, 1, "pod2", "duplicate delivery")
		s.Tracef("published <b>v2</b>")
		s.Tracef("the bus holds #2 back")
	})
	s.Go("idle", func() {
		defer wg.Done()
		for range 3 {
			s.Yield()
		}
	})
	s.Injected("the bus drops messages for pod1")
	_ = wg.Wait(ctx)
}

// run records staleRead, its trace into trace (if not nil). The simulated
// bus delivers on the world (Task -1) and faults are the world's, so the
// messages' fates and the fault are moved there, as the simulated bus and
// database record them.
func run(t *testing.T, trace io.Writer) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: 1, Record: true, TraceOut: trace}, staleRead)
	require.Error(t, res.Err, "staleRead fails by design")
	require.NotNil(t, res.Record)
	for i, e := range res.Record.Events {
		if e.Kind == record.EventReceive || e.Kind == record.EventLost || e.Kind == record.EventFault {
			res.Record.Events[i].Task = -1
		}
	}
	return res
}

func page(res sim.Result) timeline.Page {
	return timeline.Page{
		Title:    "TestOC2_StaleRead seed 0x1 (shrunk)",
		Failure:  res.Err.Error(),
		Record:   res.Record,
		Commands: []string{"go test ./scenarios/oc -run '^TestOC2$/^seed=0x1$' -sim.seed=0x1 -v"},
		Links:    []timeline.Link{{Text: "porcupine visualization", Href: "porcupine.html"}},
	}
}

func write(t *testing.T, p timeline.Page) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, timeline.Write(&b, p))
	return b.String()
}

func TestPageDrawsTheRun(t *testing.T) {
	res := run(t, nil)
	out := write(t, page(res))
	for _, lane := range []string{"pod1/reader", "pod2/writer", "pod1", "pod2"} {
		has(t, out, `data-lane="`+lane+`"`, "a lane for %s", lane)
	}
	hasNot(t, out, `data-lane="idle"`, "a task that only ran gets no lane")
	hasNot(t, out, `data-lane="main"`, "nor one that only waited for its workers")
	has(t, out, `data-group="pod1"`, "pod1's lanes are grouped")
	has(t, out, `data-group="pod2"`)
	has(t, out, `data-in-group="pod1"`, "the subscriber pod1 joins its pod")

	has(t, out, `class="bar lock`, "a lock hold")
	has(t, out, `class="bar rlock`, "a read hold")
	has(t, out, `class="bar op`, "an operation")
	has(t, out, `write k=v2 → ok`, "an operation's label is its text and its answer")
	has(t, out, `class="bar iv`, "a statement")
	has(t, out, `conn 1: UPDATE k SET v=2 (snapshot 1ms)`, "after its wait for the reader's hold")
	has(t, out, `class="arr`, "a message's arrow")
	has(t, out, `class="arr lost`, "a lost message's arrow")
	has(t, out, `× lost`)
	has(t, out, `class="arr marked`, "the duplicate is marked")
	has(t, out, `<span class="lbl">reorder</span>`, "so is the reordered one")
	has(t, out, `<span class="lbl">delayed</span>`, "a note that the bus holds a message back")
	has(t, out, `class="bar wait`, "a wait")
	has(t, out, `class="mk fault`, "the fault")
	has(t, out, `class="mk note`, "the note")

	has(t, out, `data-blamed="OC-2: read v1 after v2 committed at &#43;3ms"`, "the violating read")
	has(t, out, `class="bar op blamed`)
	has(t, out, `data-blamed="OC-2: this commit made the read stale"`, "the commit that made it stale")
	has(t, out, `class="band"`, "the blamed operation's interval across the lanes")
	has(t, out, "Blamed events", "the table of blamed events")

	has(t, out, "OC-2: stale read", "the failure")
	has(t, out, "-sim.seed=0x1", "the command")
	has(t, out, `href="porcupine.html"`, "the link")
	has(t, out, `data-rendered="0"`, "the script sets it to 1")
	hasNot(t, out, "http://cdn", "no network")
	assert.Equal(t, 1, strings.Count(out, "<script>"), "one inline script, no external one")
}

func TestTextIsEscaped(t *testing.T) {
	res := run(t, nil)
	p := page(res)
	p.Title = `<img src=x onerror=alert(1)>`
	p.Failure = "boom </script><script>alert(2)</script>"
	p.Commands = []string{`echo "<u>"`}
	p.Links = []timeline.Link{{Text: "<i>x</i>", Href: "javascript:alert(3)"}}
	p.Trace = []string{"step 1 <script>alert(4)</script>"}
	out := write(t, p)
	for _, bad := range []string{"<script>alert", "<img", "<u>", "<i>x", "javascript:alert"} {
		hasNot(t, out, bad)
	}
	has(t, out, "&lt;script&gt;alert(1)&lt;/script&gt;", "the operation's text, escaped")
	has(t, out, `\u003cscript\u003ealert(1)`, "and in the details panel's data")
	has(t, out, "&lt;img src=x onerror=alert(1)&gt;")
	has(t, out, "#ZgotmplZ", "a javascript: link is refused")
	assert.Equal(t, 2, strings.Count(out, "<script"), "the data and the script, nothing injected")
	assert.Equal(t, 2, strings.Count(out, "</script>"))
}

func TestNoRecordIsAnError(t *testing.T) {
	var b bytes.Buffer
	assert.ErrorContains(t, timeline.Write(&b, timeline.Page{Title: "x"}), "no record")
	assert.ErrorContains(t, timeline.Write(&b, timeline.Page{Record: &record.Record{}}), "no events")
	bad := &record.Record{Events: []record.Event{{Seq: 0, At: 5}, {Seq: 1, At: 1}}}
	assert.ErrorContains(t, timeline.Write(&b, timeline.Page{Record: bad}), "virtual time only moves on")
	bad = &record.Record{Events: []record.Event{{Seq: 3}}}
	assert.ErrorContains(t, timeline.Write(&b, timeline.Page{Record: bad}), "has Seq 3")
	assert.Zero(t, b.Len(), "nothing written")
	assert.Error(t, timeline.WriteFile(filepath.Join(t.TempDir(), "x.html"), timeline.Page{}))
}

func TestAHandMadeRecordDoesNotPanic(t *testing.T) {
	// Unknown kinds, unknown tasks, releases never acquired, answers never
	// begun, receives never sent: drawn as well as they can be.
	rec := &record.Record{Tasks: []string{"main"}, Events: []record.Event{
		{Seq: 0, Task: 7, Kind: record.EventUnlock, Object: "m"},
		{Seq: 1, Task: 0, Kind: record.EventOpEnd, Ref: 9, Text: "late", From: 0, At: 3},
		{Seq: 2, Task: -1, Kind: record.EventReceive, Ref: 4, Object: "sub", At: 3},
		{Seq: 3, Task: -5, Kind: record.EventKind(99), At: 4, Blame: "odd"},
		{Seq: 4, Task: 0, Kind: record.EventWait, Object: "m", Text: "Lock", At: 4},
		{Seq: 5, Task: 0, Kind: record.EventInterval, From: 10, At: 4},
	}}
	out := write(t, timeline.Page{Record: rec})
	has(t, out, `data-lane="task 7"`)
	has(t, out, `data-lane="sub"`)
	has(t, out, "odd")
}

func TestSameInputSameBytes(t *testing.T) {
	a := write(t, page(run(t, nil)))
	b := write(t, page(run(t, nil)))
	assert.Equal(t, a, b, "a page is a function of its input")
	dir := t.TempDir()
	p := page(run(t, nil))
	require.NoError(t, timeline.WriteFile(filepath.Join(dir, "a.html"), p))
	got, err := os.ReadFile(filepath.Join(dir, "a.html"))
	require.NoError(t, err)
	assert.Equal(t, a, string(got))
}

// has and hasNot check a page for a text without printing the page.
func has(t *testing.T, out, want string, msg ...any) {
	t.Helper()
	if !strings.Contains(out, want) {
		assert.Fail(t, fmt.Sprintf("the page (%d bytes) lacks %q", len(out), want), msg...)
	}
}

func hasNot(t *testing.T, out, bad string, msg ...any) {
	t.Helper()
	if i := strings.Index(out, bad); i >= 0 {
		assert.Fail(t, fmt.Sprintf("the page has %q: …%s…", bad, out[max(0, i-200):min(len(out), i+200)]), msg...)
	}
}

// elements counts the page's elements by their opening tags.
func elements(out string) int {
	n := 0
	for i := 0; i+1 < len(out); i++ {
		if out[i] == '<' && out[i+1] != '/' && out[i+1] != '!' {
			n++
		}
	}
	return n
}

// notes records n notes with a blamed read after the at-th.
func notes(n, at int) *record.Record {
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		mu := s.NewMutex("m")
		for i := range n {
			if i == at {
				op := s.OpBegin("the read")
				mu.Lock()
				mu.Unlock()
				s.Blame(s.OpEnd(op, "stale"), "X-1: the blamed read")
			}
			s.Tracef("note %d", i)
		}
	})
	if res.Err != nil {
		panic(res.Err)
	}
	return res.Record
}

func TestAPageIsBounded(t *testing.T) {
	if underRace {
		t.Skip("a single-goroutine test: the race detector has nothing to find in it (it runs in full in make unit)")
	}
	const n = 40000
	rec := notes(n, n*3/4)
	start := time.Now()
	out := write(t, timeline.Page{Title: "big", Record: rec})
	t.Logf("%d events: %d bytes, %d elements, in %v", len(rec.Events), len(out), elements(out), time.Since(start))
	assert.LessOrEqual(t, elements(out), 20000, "about 20,000 drawn elements at most")
	assert.Greater(t, elements(out), 15000, "and the bound is used")
	has(t, out, `data-left-out="1"`)
	has(t, out, "leaves out")
	has(t, out, `data-blamed="X-1: the blamed read"`, "the window keeps the blamed events")
	has(t, out, fmt.Sprintf(`title="note %d`, n-1), "and the end of the run")
	hasNot(t, out, `title="note 0`, "not the beginning")

	// A blamed read far from the end: the page draws around it.
	rec = notes(n, n/2)
	out = write(t, timeline.Page{Title: "big", Record: rec})
	assert.LessOrEqual(t, elements(out), 20000)
	has(t, out, `data-blamed="X-1: the blamed read"`)
	has(t, out, fmt.Sprintf(`title="note %d`, n/2-1))
	has(t, out, fmt.Sprintf(`title="note %d`, n/2+1))
	hasNot(t, out, fmt.Sprintf(`title="note %d`, n-1))

	// Small records are drawn whole.
	out = write(t, timeline.Page{Record: notes(100, 50)})
	hasNot(t, out, "leaves out")
	has(t, out, `title="note 0`)
}

func TestACutRecordSaysSo(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1, Record: true, MaxRecord: 10}, func(s *sim.Sim) {
		for range 50 {
			s.Tracef("x")
		}
	})
	require.True(t, res.Record.Cut)
	out := write(t, timeline.Page{Record: res.Record})
	has(t, out, `data-cut="1"`)
	has(t, out, "hit its size limit")
}

func TestTheAxisIsChosen(t *testing.T) {
	// Everything at one instant: event order, and the page says why.
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		mu := s.NewMutex("m")
		for range 5 {
			mu.Lock()
			s.Tracef("hit")
			mu.Unlock()
		}
	})
	out := write(t, timeline.Page{Record: res.Record})
	has(t, out, `data-axis="ordinal"`)
	has(t, out, "happen at one virtual instant")

	// Mostly cache hits at shared instants, a few steps of time apart.
	res = sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		for i := range 40 {
			if i%10 == 0 {
				_ = s.Sleep(context.Background(), time.Second)
			}
			s.OpEnd(s.OpBegin("hit %d", i), "v")
		}
	})
	out = write(t, timeline.Page{Record: res.Record})
	has(t, out, `data-axis="ordinal"`)
	has(t, out, "share a virtual instant")

	// Spread over time: the time axis, with ticks in a unit.
	res = sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		for i := range 10 {
			_ = s.Sleep(context.Background(), 3*time.Millisecond)
			s.Tracef("tick %d", i)
		}
	})
	out = write(t, timeline.Page{Record: res.Record})
	has(t, out, `data-axis="time"`)
	has(t, out, `ms</div>`, "ticks in milliseconds")
	has(t, out, `data-o="`, "the other axis is there for the toggle")
}

func TestTraceLinesOfTheStepsDrawn(t *testing.T) {
	var trace bytes.Buffer
	p := page(run(t, &trace))
	p.Trace = strings.Split(strings.TrimRight(trace.String(), "\n"), "\n")
	require.NotEmpty(t, p.Trace)
	out := write(t, p)
	has(t, out, `"line":"step `, "trace lines go to the details panel")
	has(t, out, "trace lines of the steps drawn are on this page")
	has(t, out, `published \u003cb\u003ev2\u003c/b\u003e`)
}

func TestTheWindowAndTheViolatingRead(t *testing.T) {
	p := page(run(t, nil))
	out := write(t, p)
	hasNot(t, out, `data-window="1"`, "no window without the claim's bound")
	has(t, out, `data-violating="1"`, "the page opens on the violating read all the same")

	p.Window = &timeline.Window{Name: "OC-2 open set max age < 1ms", Bound: time.Millisecond}
	out = write(t, p)
	has(t, out, `data-window="1"`, "the window's band")
	has(t, out, `data-stale="1"`, "the read's stale interval")
	has(t, out, "OC-2 open set max age &lt; 1ms: window 1ms", "labelled with the table's bound")
	has(t, out, "The read answered at &#43;6ms, stale for 4ms: 3ms past the bound.", "the window in words")
	i := strings.Index(out, `data-violating="1"`)
	require.Positive(t, i)
	assert.Contains(t, out[i:i+400], "OC-2: read v1 after v2", "the violating read is the blamed answer, not the commit")

	// The caption of each axis, for the script to swap in.
	has(t, out, `data-caption-time="Virtual time`)
	has(t, out, `data-caption-ordinal="Event order`)
}

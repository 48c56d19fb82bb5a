package timeline_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// chromium finds a Chromium to run headless, or skips: the page is
// checked in a real browser only where one is installed (make
// browser-test installs Debian's).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WINDTUNNEL_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		require.NoError(t, err, "WINDTUNNEL_CHROMIUM=%s", p)
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no Chromium (chromium, chromium-browser, google-chrome, or WINDTUNNEL_CHROMIUM): " +
		"install Debian's package with `apt-get install chromium`, or run `make browser-test`, which installs it")
	return ""
}

// headless runs Chromium on a page with args, bounded in time, in a
// profile of its own (so that runs do not share or leave state).
func headless(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-extensions", "--user-data-dir=" + t.TempDir()}, args...)
	all = append(all, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "chromium took more than 60s; stderr:\n%s", stderr.String())
	require.NoError(t, err, "chromium %s failed; stderr:\n%s", strings.Join(args, " "), stderr.String())
	return stdout.Bytes()
}

// repoRoot is the directory of go.mod above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the package")
		dir = parent
	}
}

func artifactDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("WINDTUNNEL_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "out", "artifacts", "timeline")
}

func TestPageRendersInChromium(t *testing.T) {
	if underRace {
		t.Skip("drives Chromium in a subprocess, which the race detector does not see (make browser-test runs it)")
	}
	bin := chromium(t)
	var trace bytes.Buffer
	p := page(run(t, &trace))
	p.Trace = strings.Split(strings.TrimRight(trace.String(), "\n"), "\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "timeline.html")
	require.NoError(t, timeline.WriteFile(path, p))

	// The DOM after the script ran.
	dom := string(headless(t, bin, path, "--dump-dom"))
	require.NotEmpty(t, dom, "chromium dumped no DOM")
	has(t, dom, `data-rendered="1"`, "the page's script ran")
	for _, lane := range []string{"pod1/reader", "pod2/writer", "world", "pod1", "pod2"} {
		has(t, dom, `data-lane="`+lane+`"`, "the lane of %s", lane)
	}
	has(t, dom, `data-blamed="OC-2: read v1 after v2 committed at +3ms"`, "the violating read")
	has(t, dom, `data-blamed="OC-2: this commit made the read stale"`)
	m := regexp.MustCompile(`data-shapes="(\d+)"`).FindStringSubmatch(dom)
	require.NotNil(t, m, "the script counted the clickable shapes")
	shapes, _ := strconv.Atoi(m[1])
	assert.Greater(t, shapes, 20)
	// It opened the details panel on the first blamed event: its events,
	// the events around it and its step's trace lines, built by the script.
	has(t, dom, `data-selected="`, "the script selected the first blamed event")
	has(t, dom, `class="blame"`, "the panel shows what was blamed")
	has(t, dom, "Around it in the record")
	has(t, dom, "Trace lines of step")
	has(t, dom, `class="trace">step `, "the trace lines of its step")
	has(t, dom, ` sel"`, "and marked the shape selected")

	// A screenshot, for a person to look at, kept as an artifact.
	png := filepath.Join(dir, "timeline.png")
	headless(t, bin, path, "--screenshot="+png, "--window-size=1400,900", "--hide-scrollbars")
	info, err := os.Stat(png)
	require.NoError(t, err, "chromium wrote no screenshot")
	assert.Greater(t, info.Size(), int64(5<<10), "the screenshot is not trivial")
	b, err := os.ReadFile(png)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")), "a PNG")

	out := artifactDir(t)
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "timeline.png"), b, 0o644))
	html, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "timeline.html"), html, 0o644))
	t.Logf("screenshot %s (%d bytes), page %s", filepath.Join(out, "timeline.png"), info.Size(), filepath.Join(out, "timeline.html"))
}

// farRead is a failing run whose violating read is far from the commit
// that made it stale on the event-order axis. The world commits at +1s. A
// busy task notes 400 cache hits over the next two seconds (most at shared
// instants, so the page picks event order). The reader answers from its
// stale cache at +3.5s. The claim's window is 1s.
func farRead(t *testing.T) timeline.Page {
	t.Helper()
	ctx := context.Background()
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		wg := s.NewWaitGroup("all")
		wg.Add(3)
		var commit record.EventID
		s.Go("pod0/admin", func() {
			defer wg.Done()
			_ = s.Sleep(ctx, time.Second)
			start := s.Now()
			commit = protocol.Interval(s, start, "conn 1", "COMMIT delete o2")
		})
		s.Go("pod1/busy", func() {
			defer wg.Done()
			_ = s.Sleep(ctx, time.Second+time.Millisecond)
			for i := range 400 {
				if i%20 == 0 {
					_ = s.Sleep(ctx, 100*time.Millisecond)
				}
				s.Tracef("cache hit %d", i)
			}
		})
		s.Go("pod1/reader", func() {
			defer wg.Done()
			_ = s.Sleep(ctx, 3500*time.Millisecond)
			op := s.OpBegin("accessible k1 n1 o2")
			read := s.OpEnd(op, "granted")
			s.Blame(read, "OC-2: grant-staleness 2.5s breaks < 1s: read of o2")
			s.Blame(commit, "OC-2: made the read stale")
		})
		_ = wg.Wait(ctx)
		s.Failf("OC-2: grant-staleness 2.5s breaks < 1s")
	})
	require.Error(t, res.Err)
	for i, e := range res.Record.Events {
		if e.Kind == record.EventInterval {
			res.Record.Events[i].Task = -1 // the database's statements are the world's
		}
	}
	return timeline.Page{Title: "TestOC2_FarRead seed 0x1 (shrunk)", Failure: res.Err.Error(), Record: res.Record,
		Window: &timeline.Window{Name: "OC-2 open set max age < 1s", Bound: time.Second}}
}

// box is a rectangle the page's script reported ("left top right bottom").
type box struct{ l, t, r, b float64 }

func boxAttr(t *testing.T, dom, name string) box {
	t.Helper()
	got := attr(dom, "data-box-"+name)
	f := strings.Fields(got)
	require.Len(t, f, 4, "the page reports the box of %s: %q", name, got)
	var v [4]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[i], 64)
		require.NoError(t, err)
		v[i] = x
	}
	return box{v[0], v[1], v[2], v[3]}
}

func (a box) meets(b box) bool { return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b }

// attr is an attribute of the page's root element.
func attr(dom, name string) string {
	root := regexp.MustCompile(`<div id="tl"[^>]*>`).FindString(dom)
	m := regexp.MustCompile(` ` + name + `="([^"]*)"`).FindStringSubmatch(root)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestPageOpensOnTheViolatingReadInChromium: on the page's first
// screenshot, before any click, the violating read and the claim's window
// are in view, however far the read is from the commit; switching the
// axis changes the caption to describe the axis shown.
func TestPageOpensOnTheViolatingReadInChromium(t *testing.T) {
	if underRace {
		t.Skip("drives Chromium in a subprocess, which the race detector does not see (make browser-test runs it)")
	}
	bin := chromium(t)
	p := farRead(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "timeline.html")
	require.NoError(t, timeline.WriteFile(path, p))
	size := "--window-size=1400,900"

	// The first screenshot, and the DOM in the same state.
	png := filepath.Join(dir, "far.png")
	headless(t, bin, path, "--screenshot="+png, size, "--hide-scrollbars")
	dom := string(headless(t, bin, path, "--dump-dom", size, "--hide-scrollbars"))
	has(t, dom, `data-rendered="1"`)
	require.Equal(t, "ordinal", attr(dom, "data-axis"), "400 hits at shared instants: event order")
	view, plot := boxAttr(t, dom, "viewport"), boxAttr(t, dom, "plot")
	for _, name := range []string{"read", "window", "stale"} {
		b := boxAttr(t, dom, name)
		assert.True(t, b.meets(view), "the %s (%v) is in the viewport (%v) when the page opens", name, b, view)
		assert.True(t, b.meets(plot), "and in the chart's visible part (%v), past the lane names: %v", plot, b)
	}
	t.Logf("opened at zoom %s: read %v, window %v, plot %v", attr(dom, "data-zoom"), boxAttr(t, dom, "read"), boxAttr(t, dom, "window"), plot)
	has(t, dom, `data-violating="1"`)
	has(t, dom, "OC-2 open set max age &lt; 1s: window 1s", "the window's label")

	// Switching the axis: a copy of the page that clicks the toggle once
	// its script has run, and notes the caption before and after.
	html, err := os.ReadFile(path)
	require.NoError(t, err)
	click := `<script>(function(){var r=document.getElementById("tl"),c=document.getElementById("tl-reason");` +
		`r.setAttribute("data-caption-before",c.textContent);document.getElementById("tl-axis").click();` +
		`r.setAttribute("data-caption-after",c.textContent);})();</script></body>`
	switched := filepath.Join(dir, "switched.html")
	require.NoError(t, os.WriteFile(switched, []byte(strings.Replace(string(html), "</body>", click, 1)), 0o644))
	dom = string(headless(t, bin, switched, "--dump-dom", size, "--hide-scrollbars"))
	before, after := attr(dom, "data-caption-before"), attr(dom, "data-caption-after")
	assert.Equal(t, "time", attr(dom, "data-axis"), "the toggle switched to virtual time")
	assert.True(t, strings.HasPrefix(before, "Event order"), "the caption described event order: %q", before)
	assert.True(t, strings.HasPrefix(after, "Virtual time"), "and now describes virtual time: %q", after)
	assert.Contains(t, after, "of virtual time")
	assert.NotContains(t, after, "Event order,", "nothing of the other axis' caption is left")
	for _, name := range []string{"read", "window"} {
		b := boxAttr(t, dom, name)
		assert.True(t, b.meets(boxAttr(t, dom, "plot")), "the %s is still in view on the other axis: %v", name, b)
	}

	b, err := os.ReadFile(png)
	require.NoError(t, err)
	out := artifactDir(t)
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "far-read.png"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "far-read.html"), html, 0o644))
}

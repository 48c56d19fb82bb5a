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

package simtest

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/timeline"
)

// windows holds the claim window each test's timeline pages draw, by test
// name (TimelineWindow).
var windows sync.Map

// TimelineWindow makes the timeline pages written for test t's seeds (a
// shrunk failure's, an explained seed's) draw a claim's window: name and
// bound as the claims table gives them ("OC-2 open set max age < 1s", 1s),
// drawn from the moment the violating read's value stopped being current.
// A claim check calls it with its bound before running its seeds; the
// bound must come from the table, not from the code under test.
func TimelineWindow(t testing.TB, name string, bound time.Duration) {
	windows.Store(t.Name(), timeline.Window{Name: name, Bound: bound})
	t.Cleanup(func() { windows.Delete(t.Name()) })
}

// windowFor is the window registered for the test a page's title names:
// the harness titles a page with its test's name, a space, and the run
// (test names have no spaces: go test turns them into underscores).
func windowFor(title string) *timeline.Window {
	test, _, _ := strings.Cut(title, " ")
	if w, ok := windows.Load(test); ok {
		win := w.(timeline.Window)
		return &win
	}
	return nil
}

// writeTimeline writes the timeline page of a recorded run into dir and
// returns its path.
func writeTimeline(dir, title, failure string, res sim.Result, trace, command string) (string, error) {
	path := filepath.Join(dir, "timeline.html")
	p := timeline.Page{Title: title, Failure: failure, Record: res.Record, Trace: strings.Split(strings.TrimRight(trace, "\n"), "\n"),
		Window: windowFor(title)}
	if command != "" {
		p.Commands = []string{command}
	}
	if err := timeline.WriteFile(path, p); err != nil {
		return "", err
	}
	return path, nil
}

package simtest

import (
	"path/filepath"
	"strings"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/timeline"
)

// writeTimeline writes the timeline page of a recorded run into dir and
// returns its path.
func writeTimeline(dir, title, failure string, res sim.Result, trace, command string) (string, error) {
	path := filepath.Join(dir, "timeline.html")
	p := timeline.Page{Title: title, Failure: failure, Record: res.Record, Trace: strings.Split(strings.TrimRight(trace, "\n"), "\n")}
	if command != "" {
		p.Commands = []string{command}
	}
	if err := timeline.WriteFile(path, p); err != nil {
		return "", err
	}
	return path, nil
}

package goker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// BuildReal builds GoKer's own program from src, unchanged, with the
// goroutine-leak profile on, into dir; it returns the executable's path.
func BuildReal(src, dir string) (string, error) {
	exe := filepath.Join(dir, "goker-real")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=goroutineleakprofile", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("goker: building the real program: %v\n%s", err, out)
	}
	return exe, nil
}

// Real is one kernel on real goroutines: Leaks of Runs runs reported a
// leaked goroutine, the first at run First (1-based, 0 when none); Leaked
// counts the leaked goroutines of all runs.
type Real struct {
	Runs, Leaks, First, Leaked int
	Hung                       bool // a run went over a minute; the count stops there
}

// leakedGoroutineRE matches a goroutine's header in the leak profile (debug=2) when
// the collector found it leaked: "goroutine 21 [chan send (leaked)]:".
var leakedGoroutineRE = regexp.MustCompile(`(?m)^goroutine \d+\b[^\n]*\(leaked`)

// RealRate runs kernel name on real goroutines n times, as Go's own test
// does (GODEBUG=asyncpreemptoff=1), and counts the runs whose leak profile
// reports a leaked goroutine. A run is bounded by a minute.
func RealRate(exe, name string, n int) Real {
	var r Real
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, exe, name)
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil && ctx.Err() != nil {
			r.Hung = true
			return r
		}
		r.Runs++
		if n := len(leakedGoroutineRE.FindAllIndex(out, -1)); n > 0 {
			r.Leaks++
			r.Leaked += n
			if r.First == 0 {
				r.First = r.Runs
			}
		}
	}
	return r
}

package goker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// RealRate runs kernel name on real goroutines n times, as Go's own test
// does (GODEBUG=asyncpreemptoff=1), and counts the runs whose leak profile
// reports a leaked goroutine. A run is bounded by a minute.
func RealRate(exe, name string, n int) (int, error) {
	leaked := 0
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, exe, name)
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil && ctx.Err() != nil {
			return leaked, fmt.Errorf("goker: %s on real goroutines ran over a minute", name)
		}
		if strings.Contains(string(out), "(leaked)") {
			leaked++
		}
	}
	return leaked, nil
}

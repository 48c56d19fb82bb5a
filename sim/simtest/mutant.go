package simtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The variables a tool that runs a mutant sets, so that the test binary
// knows its code is not the checkout's. MutantEnv names the mutant (it also
// selects it in a schema build). MutantsEnv names the file of mutants it
// comes from when it is not in the project's catalogue (make try-mutants).
const (
	MutantEnv  = "WINDTUNNEL_MUTANT"
	MutantsEnv = "WINDTUNNEL_MUTANTS"
)

// mutation is what a run knows of the change it flies instead of the
// checkout's code. The zero value is the checkout itself.
type mutation struct {
	id        string // the mutant's ID, "" when the change is an overlay of unknown content
	catalogue string // the file the mutant comes from, "" for the project's catalogue
	overlay   string // the -overlay the go command was given, when that is all that is known
}

// mutated reports whether the code under test is not the checkout's: a
// mutant's failing seeds belong to the mutant, never to the corpus.
func (m mutation) mutated() bool { return m.id != "" || m.overlay != "" }

func (m mutation) String() string {
	switch {
	case m.id != "" && m.catalogue != "":
		return fmt.Sprintf("mutant %s (from %s)", m.id, m.catalogue)
	case m.id != "":
		return "mutant " + m.id
	case m.overlay != "":
		return "the overlay " + m.overlay
	}
	return "the checkout's code"
}

var (
	mutationOnce sync.Once
	mutationNow  mutation
)

// currentMutation reads the mutant once per process: from the variables
// the project's tools set, else from an -overlay given to the go command
// that started this test binary (its parent, or GOFLAGS).
func currentMutation() mutation {
	mutationOnce.Do(func() {
		mutationNow.id = os.Getenv(MutantEnv)
		if c := os.Getenv(MutantsEnv); c != "" && mutationNow.id != "" {
			if abs, err := filepath.Abs(c); err == nil {
				c = abs
			}
			mutationNow.catalogue = c
		}
		if mutationNow.id == "" {
			mutationNow.overlay = overlayOf(os.Getenv("GOFLAGS"), parentArgs())
		}
	})
	return mutationNow
}

// overlayOf finds an -overlay in GOFLAGS or in the parent's arguments.
func overlayOf(goflags string, parent []string) string {
	args := append(strings.Fields(goflags), parent...)
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "overlay" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		return value
	}
	return ""
}

// parentArgs are the arguments of the process that started this one, where
// the system shows them (Linux's /proc); go test is the parent of a test
// binary it runs.
func parentArgs() []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getppid()))
	if err != nil || len(data) > 1<<20 {
		return nil
	}
	var args []string
	for _, a := range bytes.Split(bytes.TrimRight(data, "\x00"), []byte{0}) {
		args = append(args, string(a))
	}
	// Only the go command's own flags matter: a test binary's arguments
	// (after the package) could name anything.
	if len(args) == 0 || filepath.Base(args[0]) != "go" {
		return nil
	}
	return args
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package failfast

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// mutated: the overlay's edit (Broken), or the schema binary's selection.
func mutated() bool { return Broken || os.Getenv("WINDTUNNEL_MUTANT") != "" }

// started leaves a mark that a test body ran, in the directory the runner's
// test names.
func started(t *testing.T, name string) {
	if dir := os.Getenv("FAILFAST_MARKS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCaught(t *testing.T) {
	t.Run("small", func(t *testing.T) {
		started(t, "small")
		if mutated() {
			t.Fatal("caught by the small configuration")
		}
	})
	t.Run("large", func(t *testing.T) { started(t, "large") })
}

func TestLater(t *testing.T) { started(t, "later") }

// TestSlow holds its process until it is killed when FAILFAST_SLOW is set:
// a run the user interrupts.
func TestSlow(t *testing.T) {
	if os.Getenv("FAILFAST_SLOW") != "" {
		time.Sleep(time.Minute)
	}
}

package racy

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// TestX1_RealGoroutinesRaceFree increments on four goroutines, each
// yielding after every increment, so they interleave on one processor
// too. With RACY_RUNS set to a directory it counts its runs there, and on
// every second run increments once, on one goroutine only: that run makes
// no race for the detector to see, whatever the code.
func TestX1_RealGoroutinesRaceFree(t *testing.T) {
	goroutines := 4
	if dir := os.Getenv("RACY_RUNS"); dir != "" {
		file := filepath.Join(dir, "runs")
		b, _ := os.ReadFile(file)
		n, _ := strconv.Atoi(string(b))
		if err := os.WriteFile(file, []byte(strconv.Itoa(n+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if n%2 == 1 {
			goroutines = 1
		}
	}
	var c Counter
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				c.Inc()
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	if got := c.Value(); got != goroutines*200 {
		t.Errorf("counted %d, want %d", got, goroutines*200)
	}
}

// Package orderlog lets the claim phase fixtures say when each test ran: a
// line "name start end" (Unix nanoseconds) per test, appended to the file
// $WINDTUNNEL_ORDER_LOG.
package orderlog

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// Span notes the test's start; the function it returns notes its end and
// writes the line.
func Span(t *testing.T) func() {
	start := time.Now()
	return func() {
		path := os.Getenv("WINDTUNNEL_ORDER_LOG")
		if path == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "%s %d %d\n", t.Name(), start.UnixNano(), time.Now().UnixNano()); err != nil {
			t.Error(err)
		}
	}
}

// Package events is a fixture of the audit's test-event parsing: each test
// is one way a test run ends, recorded as go test -json's events by
// TestRecordedEventStreams -update.
package events

import (
	"testing"
	"time"
)

func TestPass(t *testing.T) { t.Log("claim X-1 holds") }

func TestSubFails(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("seed=0x2", func(t *testing.T) { t.Fatal("the second seed breaks it") })
}

func TestSleeps(t *testing.T) { time.Sleep(time.Minute) }

func TestPanics(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}

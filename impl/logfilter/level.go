package logfilter

import (
	"log/slog"
	"math"
	"strings"
)

// LevelTrace is the slog level of tracing's TRACE: one step of 4 below
// slog.LevelDebug, the gap slog leaves between its named levels. Log trace
// events with Logger.Log(ctx, logfilter.LevelTrace, ...).
const LevelTrace = slog.LevelDebug - 4

// LevelOff is the level of an "off" directive. It enables nothing: both
// filters test for it before they compare levels, so not even an event
// logged at LevelOff itself passes an "off" directive.
const LevelOff = slog.Level(math.MaxInt)

// levelNames are the level names of a directive, in tracing's spelling.
// Numeric levels (tracing also reads 0-5) are not accepted: one spelling
// per level keeps String's canonical form unique.
var levelNames = [...]struct {
	name  string
	level slog.Level
}{
	{"trace", LevelTrace},
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
	{"off", LevelOff},
}

// parseLevel reads a level name, ignoring case. The empty string is not a
// level here: what an empty level means is each parser's own decision (the
// span-aware parser reads TRACE, the target table's ERROR; see LF-3).
func parseLevel(s string) (slog.Level, bool) {
	for _, n := range levelNames {
		if strings.EqualFold(s, n.name) {
			return n.level, true
		}
	}
	return 0, false
}

// levelName is the canonical (lower-case) name of a directive level.
// Levels that no parsed directive carries are printed as slog prints them.
func levelName(l slog.Level) string {
	for _, n := range levelNames {
		if n.level == l {
			return n.name
		}
	}
	return l.String()
}

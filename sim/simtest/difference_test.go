package simtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTraceDifferenceNamesTheFirstDifferingLine: the determinism failure's
// second line. Equal traces have no difference (""), so a caller cannot
// report one where there is none; a trace that is a prefix of the other is
// named as such, with both lengths, not as a line that differs.
func TestTraceDifferenceNamesTheFirstDifferingLine(t *testing.T) {
	assert.Empty(t, traceDifference("a\nb\n", "a\nb\n"))
	assert.Empty(t, traceDifference("", ""))
	assert.Equal(t, "first difference at trace line 2:\n  run 1: b\n  run 2: c", traceDifference("a\nb\nd\n", "a\nc\nd\n"))
	assert.Equal(t, "the trace of run 1 is the first 2 of the 3 lines of run 2's", traceDifference("a\nb\n", "a\nb\nc\n"))
	assert.Equal(t, "the trace of run 2 is the first 1 of the 2 lines of run 1's", traceDifference("a\nb\n", "a\n"))
}

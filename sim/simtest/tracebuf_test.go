package simtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceBufferKeepsAllThatFits(t *testing.T) {
	b := newTraceBuffer(1 << 10)
	var want strings.Builder
	for i := range 50 {
		line := fmt.Sprintf("step %d\n", i)
		want.WriteString(line)
		_, _ = b.Write([]byte(line))
	}
	require.Less(t, want.Len(), 1<<10)
	assert.Equal(t, want.String(), b.String())
	assert.Zero(t, b.Cut())

	// Past half the limit the bytes go to the ring; still nothing is lost.
	b = newTraceBuffer(64)
	_, _ = b.Write([]byte("0123456789012345678901234567890123456789\n"))
	assert.Equal(t, "0123456789012345678901234567890123456789\n", b.String())
}

// A long trace keeps its head and its tail, whole lines only, within its
// limit, and says exactly how many bytes it left out.
func TestTraceBufferKeepsHeadAndTailOfALongTrace(t *testing.T) {
	const limit = 1 << 10
	b := newTraceBuffer(limit)
	total := 0
	for i := range 10000 {
		line := fmt.Sprintf("step %d\n", i)
		total += len(line)
		n, err := b.Write([]byte(line))
		require.NoError(t, err)
		require.Equal(t, len(line), n)
	}
	got := b.String()
	assert.True(t, strings.HasPrefix(got, "step 0\nstep 1\n"), got[:20])
	assert.True(t, strings.HasSuffix(got, "step 9998\nstep 9999\n"))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	marker := regexp.MustCompile(`^… (\d+) bytes of trace left out here: a kept trace holds at most 1024 bytes, its first and its last$`)
	var left, kept int
	markers := 0
	for _, l := range lines {
		if m := marker.FindStringSubmatch(l); m != nil {
			markers++
			left, _ = strconv.Atoi(m[1])
			continue
		}
		require.Regexp(t, `^step \d+$`, l, "a line cut in two")
		kept += len(l) + 1
	}
	assert.Equal(t, 1, markers)
	assert.Equal(t, total, kept+left, "what was kept and what was left out add up to what was written")
	assert.LessOrEqual(t, kept, limit)
	assert.Greater(t, kept, limit-40, "it keeps nearly all it may")
}

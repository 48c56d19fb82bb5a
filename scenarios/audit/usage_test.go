package audit

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChildrenUsageCountsAWaitedChild: a child that ran and was waited for
// adds its faults (every process faults in its pages) and some CPU time to
// the reading; the text gives the CPU, the kernel's share and the faults.
func TestChildrenUsageCountsAWaitedChild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("getrusage is unix")
	}
	before, ok := ChildrenUsage()
	require.True(t, ok)
	for range 3 {
		require.NoError(t, exec.Command("go", "version").Run())
	}
	after, ok := ChildrenUsage()
	require.True(t, ok)
	d := after.Sub(before)
	assert.Positive(t, d.MinorFaults, "three processes faulted in their pages")
	assert.Positive(t, d.User+d.System, "and used some CPU")
	assert.Equal(t, "3.5 CPU-s (1.2 in the kernel, 4,890,550 minor page faults)",
		Usage{User: 2300e6, System: 1200e6, MinorFaults: 4890550}.String())
	assert.Equal(t, "0.0 CPU-s (0.0 in the kernel, 999 minor page faults)", Usage{MinorFaults: 999}.String())
	assert.Equal(t, "-1,000", thousands(-1000))
}

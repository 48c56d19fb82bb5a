package simtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
)

// TestTimelineWindowReachesThePage: the bound a claim check registers is
// drawn on the pages of its test's runs, and only on those.
func TestTimelineWindowReachesThePage(t *testing.T) {
	TimelineWindow(t, "OC-2 open set max age < 1s", time.Second)
	res := sim.Run(sim.Config{Seed: 1, Record: true}, func(s *sim.Sim) {
		_ = s.Sleep(context.Background(), time.Second)
		op := s.OpBegin("read")
		_ = s.Sleep(context.Background(), 2*time.Second)
		s.Blame(s.OpEnd(op, "stale"), "OC-2: stale")
	})
	require.NoError(t, res.Err)
	page := func(title string) string {
		path, err := writeTimeline(t.TempDir(), title, "OC-2: stale", res, "", "")
		require.NoError(t, err)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}
	out := page(t.Name() + " seed 0x1, shrunk")
	assert.Contains(t, out, `data-window="1"`)
	assert.Contains(t, out, "OC-2 open set max age &lt; 1s: window 1s")
	assert.NotContains(t, page("TestAnother seed 0x1, shrunk"), `data-window="1"`, "another test's page draws no window")
}

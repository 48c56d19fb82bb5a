package dr

import (
	"errors"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestDR1_NewRefusesWhatItCannotRun holds collector.New to its contract
// before any drain: a missing runtime, a negative bucket width and a
// negative buffer bound are refused with ErrInvalid, never a panic or a
// collector that drains into nonsense; zeros take the defaults.
func TestDR1_NewRefusesWhatItCannotRun(t *testing.T) {
	for what, c := range map[string]struct {
		r   rt.Runtime
		cfg collector.Config
	}{ //windtunnel:unordered each case alone
		"nil runtime":                {nil, collector.Config{}},
		"negative bucket width":      {rt.Real(), collector.Config{BucketWidth: -time.Second}},
		"negative MaxBufferedPoints": {rt.Real(), collector.Config{MaxBufferedPoints: -1}},
	} {
		col, err := collector.New(c.r, c.cfg)
		if !errors.Is(err, collector.ErrInvalid) || col != nil {
			t.Errorf("DR-1: collector.New with a %s = %v, %v; want ErrInvalid and no collector", what, col != nil, err)
		}
	}
	if _, err := collector.New(rt.Real(), collector.Config{}); err != nil {
		t.Errorf("DR-1: collector.New with the zero Config (every default): %v", err)
	}
}

package sim

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose Config.Abandon is set stops at its next check (every
// abandonCheckSteps steps) and says so. A run whose Abandon stays false is
// the same run as one without it (the same steps and trace hash).
func TestAbandonEndsARunAndChangesNothingElse(t *testing.T) {
	loop := func(s *Sim) {
		for range 50_000 {
			s.Yield()
		}
	}
	plain := Run(Config{Seed: 3}, loop)
	require.NoError(t, plain.Err)

	var no atomic.Bool
	same := Run(Config{Seed: 3, Abandon: &no}, loop)
	require.NoError(t, same.Err)
	assert.Equal(t, plain.Hash, same.Hash)
	assert.Equal(t, plain.Steps, same.Steps)
	assert.False(t, same.Abandoned)

	var yes atomic.Bool
	yes.Store(true)
	cut := Run(Config{Seed: 3, Abandon: &yes}, loop)
	require.Error(t, cut.Err)
	assert.True(t, cut.Abandoned)
	assert.Contains(t, cut.Err.Error(), "abandoned")
	assert.LessOrEqual(t, cut.Steps, int64(abandonCheckSteps))

	// Under PCT too (its pick goes through the same check).
	cut = Run(Config{Seed: 3, Abandon: &yes, Strategy: PCT(3, 60_000)}, loop)
	assert.True(t, cut.Abandoned)
}

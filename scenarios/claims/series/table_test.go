package series

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

func TestEverySeriesIsForAKnownClaim(t *testing.T) {
	cs, err := claims.Claims()
	require.NoError(t, err)
	known := map[string]bool{}
	for _, c := range cs {
		known[c.ID] = true
	}
	for _, m := range Table {
		assert.True(t, known[m.Claim], "metric %s names an unknown claim", m.Series())
	}
}

package pods

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// Short and Key.String format by hand (they label every operation); the
// labels the shrinker matches against failure texts must stay the ones fmt
// printed.
func TestShortNamesAsFmtDid(t *testing.T) {
	for _, kind := range []byte{'a', 'k', 'u', 'z'} {
		for _, n := range []uint64{0, 1, 9, 10, 12, 4096, math.MaxUint64} {
			require.Equal(t, fmt.Sprintf("%c%d", kind, n), Short(authz.NewID(kind, n)))
		}
	}
	other := authz.NewID('A', 3) // not a lower-case kind: printed in full
	require.Equal(t, other.String(), Short(other))
	var long authz.ID
	long[0], long[3] = 'u', 1 // a lower-case kind with a non-zero high byte
	require.Equal(t, long.String(), Short(long))

	k := Key{Family: MS, Community: authz.NewID('k', 7), Subject: authz.NewID('u', 4), Channel: authz.NewID('p', 5)}
	require.Equal(t, "ms/k7/u4/p5", k.String())
	k.Family, k.Channel = OC, other
	require.Equal(t, "oc/k7/u4/"+other.String(), k.String())
}

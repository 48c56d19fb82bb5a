package membership_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func TestDefaultsAreTheSeeds(t *testing.T) {
	c, err := membership.New(rt.Real(), authztest.New(rt.Real()), membership.Config{})
	require.NoError(t, err)
	cfg := c.Config()
	assert.Equal(t, membership.DefaultFreshness, cfg.Freshness)
	assert.Equal(t, 10e9, float64(cfg.Freshness))
	assert.Equal(t, int64(64<<20), cfg.BudgetBytes)
	assert.Equal(t, 16384, cfg.MaxSnapshotIDs)
	assert.Equal(t, membership.DefaultLockWait, cfg.LockWait)
}

func TestConfigErrorsAreClear(t *testing.T) {
	db := authztest.New(rt.Real())
	for name, tc := range map[string]struct {
		cfg  membership.Config
		want string
	}{
		"negative freshness": {membership.Config{Freshness: -1}, "Freshness must be positive"},
		"negative lock wait": {membership.Config{LockWait: -1}, "LockWait must be positive"},
		"negative max ids":   {membership.Config{MaxSnapshotIDs: -1}, "MaxSnapshotIDs must be in"},
		"huge max ids":       {membership.Config{MaxSnapshotIDs: 1 << 21}, "MaxSnapshotIDs must be in"},
		"negative budget":    {membership.Config{BudgetBytes: -5}, "cannot hold one snapshot"},
		"budget below one max snapshot": {membership.Config{BudgetBytes: membership.EntryWeight(membership.Snapshot, 16384) - 1},
			"cannot hold one snapshot"},
		"budget below one loading entry": {membership.Config{MaxSnapshotIDs: 1, BudgetBytes: membership.EntryWeight(membership.Loading, 0) - 1},
			"or one loading entry"},
	} {
		_, err := membership.New(rt.Real(), db, tc.cfg)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), tc.want, name)
		assert.Contains(t, err.Error(), "membership: invalid Config", name)
	}
	_, err := membership.New(rt.Real(), db, membership.Config{BudgetBytes: membership.EntryWeight(membership.Snapshot, 16384)})
	assert.NoError(t, err, "a budget of exactly one maximum-size snapshot is enough")
	_, err = membership.New(nil, db, membership.Config{})
	assert.Error(t, err)
	_, err = membership.New(rt.Real(), nil, membership.Config{})
	assert.Error(t, err)
}

// MS-8: the weigher counts the payload and never returns zero.
func TestEntryWeight(t *testing.T) {
	assert.Equal(t, int64(256<<10+membership.EntryOverheadBytes), membership.EntryWeight(membership.Snapshot, 16384),
		"a maximum-size list is 256 KiB of IDs plus overhead")
	assert.Equal(t, int64(membership.EntryOverheadBytes), membership.EntryWeight(membership.Snapshot, 0), "empty snapshot")
	assert.Equal(t, int64(membership.EntryOverheadBytes), membership.EntryWeight(membership.PointChecks, 0), "marker")
	assert.Equal(t, int64(membership.EntryOverheadBytes+membership.LoadingLockBytes), membership.EntryWeight(membership.Loading, 0))
	assert.Positive(t, membership.EntryWeight(membership.Snapshot, 0))
	assert.Equal(t, int64(16), membership.EntryWeight(membership.Snapshot, 5)-membership.EntryWeight(membership.Snapshot, 4))
	assert.Equal(t, "point_checks", membership.PointChecks.String())
	assert.Equal(t, "loading", membership.Loading.String())
	assert.Equal(t, "snapshot", membership.Snapshot.String())
	assert.Equal(t, "Kind(9)", membership.Kind(9).String())
}

func TestZeroIDsAreRejected(t *testing.T) {
	w := newWorld(t, rt.Real(), 1, nil, membership.Config{}, nil)
	for _, ids := range [][3]int{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}} {
		pick := func(i int, v [16]byte) [16]byte {
			if ids[i] == 0 {
				return [16]byte{}
			}
			return v
		}
		_, err := w.c.IsMember(bg, pick(0, community), pick(1, user), pick(2, ch(1)))
		assert.ErrorIs(t, err, membership.ErrZeroID)
	}
	assert.Zero(t, w.db.Stats().Statements)
	assert.Zero(t, w.c.Usage().Entries)
}

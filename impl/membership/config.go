package membership

import (
	"errors"
	"fmt"
	"time"
)

// Defaults, from the seed (membership-snapshot-cache) unless noted.
const (
	// DefaultFreshness is the freshness bound of a snapshot or marker,
	// counted from the checkout of the connection that read it (MS-2).
	DefaultFreshness = 10 * time.Second

	// DefaultBudgetBytes is the weighted budget of the whole cache: 64 MiB
	// of estimated retained weight per relay (MS-8).
	DefaultBudgetBytes = 64 << 20

	// DefaultMaxSnapshotIDs is the largest membership list kept as a
	// snapshot. The loader asks for one more, 16,385, so that a list of
	// exactly 16,384 is known to be complete (MS-4).
	DefaultMaxSnapshotIDs = 16384

	// DefaultLockWait bounds how long a check waits for another request's
	// load of the same user before it gives up and asks the database directly
	// (MS-6). The seed gives no number. 2 s is four times the mean
	// authorization checkout wait its A/B measured with a saturated pool
	// (≈0.5 s), plus the 25 ms maximum-size query. So waiters normally share
	// the load even under pressure. It is also well under the seconds-long
	// client authentication p99 the seed reports (6–8 s). So a stuck load
	// turns into point checks instead of failed logins.
	DefaultLockWait = 2 * time.Second

	// maxSnapshotIDsLimit keeps MaxSnapshotIDs sane: 2^20 IDs is 16 MiB in
	// one entry, a quarter of the default budget.
	maxSnapshotIDsLimit = 1 << 20
)

// Config tunes a Cache. The zero value means every default.
type Config struct {
	// Freshness is how long an entry answers checks, counted from the
	// instant its connection was checked out (MS-2). 0 means
	// DefaultFreshness.
	Freshness time.Duration

	// BudgetBytes bounds the estimated weight of all entries (MS-8). 0 means
	// DefaultBudgetBytes. It must hold at least one maximum-size snapshot
	// and one loading entry.
	BudgetBytes int64

	// MaxSnapshotIDs is the largest list kept as a snapshot; above it a
	// PointChecks marker is kept (MS-4). 0 means DefaultMaxSnapshotIDs.
	MaxSnapshotIDs int

	// LockWait bounds the wait for another request's load of the same user
	// (MS-6). 0 means DefaultLockWait.
	LockWait time.Duration
}

// withDefaults fills zero fields and rejects values that cannot work.
func (c Config) withDefaults() (Config, error) {
	// Negative values are refused before the defaults replace the zeros,
	// so that each test sees every value a caller can pass.
	var errs []error
	if c.Freshness < 0 {
		errs = append(errs, fmt.Errorf("config field Freshness must be positive, got %v", c.Freshness))
	}
	if c.LockWait < 0 {
		errs = append(errs, fmt.Errorf("config field LockWait must be positive, got %v", c.LockWait))
	}
	badIDs := c.MaxSnapshotIDs < 0
	if c.Freshness == 0 {
		c.Freshness = DefaultFreshness
	}
	if c.BudgetBytes == 0 {
		c.BudgetBytes = DefaultBudgetBytes
	}
	if c.MaxSnapshotIDs == 0 {
		c.MaxSnapshotIDs = DefaultMaxSnapshotIDs
	}
	if c.LockWait == 0 {
		c.LockWait = DefaultLockWait
	}
	if badIDs || c.MaxSnapshotIDs > maxSnapshotIDsLimit {
		errs = append(errs, fmt.Errorf("config field MaxSnapshotIDs must be in [1, %d], got %d", maxSnapshotIDsLimit, c.MaxSnapshotIDs))
	} else if need := max(EntryWeight(Snapshot, c.MaxSnapshotIDs), EntryWeight(Loading, 0)); c.BudgetBytes < need {
		// A budget below one maximum-size snapshot would silently turn
		// every large user into a reload per check; one below a loading
		// entry would keep no loading lock, so concurrent cold checks
		// would each load (MS-5).
		errs = append(errs, fmt.Errorf("config field BudgetBytes %d cannot hold one snapshot of MaxSnapshotIDs=%d IDs or one loading entry (%d bytes)", c.BudgetBytes, c.MaxSnapshotIDs, need))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("membership: invalid Config: %w", errors.Join(errs...))
	}
	return c, nil
}

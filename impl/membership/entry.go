package membership

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// Kind is the state of a cache entry for one (community, user).
type Kind uint8

const (
	// Loading marks a load in flight. It carries the user's lock, which
	// every request for that user shares (MS-5), and no decision.
	Loading Kind = iota + 1
	// Snapshot is a complete, sorted, immutable list of the user's active
	// memberships in the community, at most MaxSnapshotIDs long.
	Snapshot
	// PointChecks marks a user with more than MaxSnapshotIDs memberships:
	// it stores no decision, and each check asks the database (MS-4).
	PointChecks
)

func (k Kind) String() string {
	switch k {
	case Loading:
		return "loading"
	case Snapshot:
		return "snapshot"
	case PointChecks:
		return "point_checks"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Estimated bookkeeping, in bytes, that an entry retains besides its IDs
// (MS-8). Go gives no exact figure for a map slot, so these are estimates on
// a 64-bit platform, rounded up:
//
//	map slot (32-byte key, 8-byte value pointer, control byte, load factor)  64
//	wcache node (key 32, value 8, expiry 24, weight 8, list links 16)        88
//	entry struct (kind, slice header 24, two instants 48, lock interface 16) 96
//	allocator rounding                                                        8
//
// The total is the weight of an empty snapshot or a marker: nonzero, so
// that a flood of users with no memberships still fills the budget.
const (
	// EntryOverheadBytes is the estimated bookkeeping of any entry.
	EntryOverheadBytes = 256
	// LoadingLockBytes is the extra estimate for a loading entry's lock
	// (the runtime's mutex and its wait queue).
	LoadingLockBytes = 128
)

// EntryWeight is the weigher of the cache (MS-8): estimated bookkeeping plus
// 16 bytes per stored ID. A maximum-size snapshot (16,384 IDs) weighs
// 256 KiB plus EntryOverheadBytes. ids counts the IDs the entry stores,
// which is zero for Loading and PointChecks entries.
func EntryWeight(kind Kind, ids int) int64 {
	w := int64(EntryOverheadBytes) + int64(ids)*authz.IDSize // MS-8: payload counts
	if kind == Loading {
		w += LoadingLockBytes
	}
	return w
}

// entry is the value stored per (community, user). Published entries are
// never modified, so a request may read one after releasing the cache lock.
type entry struct {
	kind Kind
	// ids is the sorted membership list of a Snapshot; nil otherwise.
	ids []authz.ID
	// checkedOutAt is when the connection that read a Snapshot or
	// PointChecks marker was checked out; for Loading, when it was created.
	checkedOutAt time.Time
	// expiresAt is the instant the entry stops answering; the wcache
	// expiry is set to the same instant.
	expiresAt time.Time
	// lock is the per-user lock of a Loading entry; nil otherwise. The
	// entry's identity (its pointer) is what the publication fence
	// compares (MS-3), so no separate generation number is needed.
	lock rt.Mutex
}

func weigh(_ key, e *entry) int64 { return EntryWeight(e.kind, len(e.ids)) }

// contains answers a channel check from a snapshot by binary search. It
// allocates nothing (the hit benchmark asserts it).
func (e *entry) contains(channel authz.ID) bool {
	_, found := slices.BinarySearchFunc(e.ids, channel, compareIDs)
	return found
}

// compareIDs is authz.Compare (bytewise order) computed on two big-endian
// words, which is the same order and about twice as fast as bytes.Compare
// on 16 bytes; the hit path runs it 14 times at 16,384 IDs.
func compareIDs(a, b authz.ID) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
}

// key identifies an entry: snapshots are per (community, user).
type key struct{ community, user authz.ID }

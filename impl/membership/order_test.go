package membership_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
)

// The snapshot order is authz.Compare's bytewise order.
func TestSnapshotOrderIsBytewise(t *testing.T) {
	id := rapid.Custom(func(t *rapid.T) authz.ID {
		var x authz.ID
		copy(x[:], rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0x7f, 0x80, 0xff}), 16, 16).Draw(t, "bytes"))
		return x
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := id.Draw(t, "a"), id.Draw(t, "b")
		if got, want := membership.CompareIDs(a, b), authz.Compare(a, b); got != want {
			t.Fatalf("compare(%v, %v) = %d, want %d", a, b, got, want)
		}
	})
}

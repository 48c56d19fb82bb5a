package authz

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// TestCompareIsBytewise: Compare is bytes.Compare on the 16 bytes, the
// order every snapshot is sorted in, for any two IDs, including ones that
// differ only in the second half or only in a byte's high bit.
func TestCompareIsBytewise(t *testing.T) {
	id := rapid.Custom(func(t *rapid.T) ID {
		var b [16]byte
		copy(b[:], rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0x7f, 0x80, 0xfe, 0xff}), 16, 16).Draw(t, "bytes"))
		return b
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := id.Draw(t, "a"), id.Draw(t, "b")
		if got, want := Compare(a, b), bytes.Compare(a[:], b[:]); got != want {
			t.Fatalf("Compare(%v, %v) = %d, bytes.Compare says %d", a, b, got, want)
		}
	})
	a := NewID('c', 1)
	b := a
	b[15]++
	assert.Equal(t, -1, Compare(a, b), "the last byte decides when the rest is equal")
	assert.Equal(t, 0, Compare(a, a))
	b = a
	b[7] |= 0x80
	assert.Equal(t, -1, Compare(a, b), "bytes are unsigned")
}

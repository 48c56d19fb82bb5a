package authz

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// ID is a 16-byte UUID, as the seeds' schema uses for communities, users and
// channels. A snapshot of 16,384 IDs is therefore 256 KiB of payload.
type ID [16]byte

// IDSize is the payload size of one ID in bytes.
const IDSize = 16

// Compare orders IDs bytewise; it is the order snapshots are sorted in.
// It compares the two big-endian halves as integers, which is the bytewise
// order: a sort of 2,000 IDs spent two thirds of its time in
// bytes.Compare's call for 16 bytes (TestCompareIsBytewise).
func Compare(a, b ID) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
}

// String formats the ID in the canonical 8-4-4-4-12 hex form.
func (id ID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], id[10:16])
	return string(b[:])
}

// IsZero reports whether the ID is all zero bytes (the "absent" value).
func (id ID) IsZero() bool { return id == ID{} }

// ParseID parses the canonical 8-4-4-4-12 hex form.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, fmt.Errorf("authz: %q is not a UUID in 8-4-4-4-12 form", s)
	}
	parts := [][2]int{{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}}
	off := 0
	for _, p := range parts {
		n, err := hex.Decode(id[off:], []byte(s[p[0]:p[1]]))
		if err != nil {
			return ID{}, fmt.Errorf("authz: %q is not a UUID: %v", s, err)
		}
		off += n
	}
	return id, nil
}

// NewID returns an ID built from a number, for tests and simulations that
// need many distinct, readable IDs: the number fills the last 8 bytes and
// kind (an ASCII letter such as 'c' for channel) the first byte.
func NewID(kind byte, n uint64) ID {
	var id ID
	id[0] = kind
	for i := 0; i < 8; i++ {
		id[15-i] = byte(n >> (8 * i))
	}
	return id
}

// MarshalText implements encoding.TextMarshaler (canonical form).
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

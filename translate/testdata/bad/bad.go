// Package bad holds constructs the translator refuses.
package bad

import (
	"net"
	"unsafe"
)

func Bad(p *int) *int {
	_, _ = net.Dial("tcp", "x")
	a := uintptr(unsafe.Pointer(p))
	return (*int)(unsafe.Pointer(a))
}

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

type sink chan<- int

func (s sink) Put(v int) { s <- v }

func Nil(s sink) (bool, chan<- int) {
	return s == nil, s
}

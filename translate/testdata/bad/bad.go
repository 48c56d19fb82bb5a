// Package bad holds constructs the translator refuses.
package bad

import (
	"context"
	"net"
	"unsafe"
)

func Bad(ctx context.Context, p *int) uintptr {
	done := ctx.Done()
	_ = done
	_, _ = net.Dial("tcp", "x")
	return uintptr(unsafe.Pointer(p))
}

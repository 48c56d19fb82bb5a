package simtest

import (
	"bytes"
	"fmt"
)

// maxTraceBytes bounds the full trace a run keeps in memory for its
// artifacts, its timeline page and -sim.trace: a run of 10⁸ steps writes
// gigabytes of trace. Past it the trace keeps its first and its last
// halves; the replay file, not the trace, is what reproduces the run.
const maxTraceBytes = 64 << 20

// traceBuffer is an io.Writer that keeps at most limit bytes: all of them
// while they fit, else the first limit/2 and the last limit/2, joined by a
// line that says how much was left out. Lines are cut whole.
type traceBuffer struct {
	limit int
	head  bytes.Buffer
	tail  []byte // ring of the last limit/2 bytes, once head is full
	next  int    // where the ring writes next
	full  bool   // the ring has wrapped
	cut   int64  // bytes that went through the ring and out of it
}

func newTraceBuffer(limit int) *traceBuffer { return &traceBuffer{limit: max(limit, 2)} }

func (b *traceBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.limit/2 - b.head.Len(); b.tail == nil && room > 0 {
		k := min(room, len(p))
		b.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.tail == nil {
		b.tail = make([]byte, b.limit-b.limit/2)
	}
	for len(p) > 0 {
		k := copy(b.tail[b.next:], p)
		if b.full {
			b.cut += int64(k)
		}
		p = p[k:]
		b.next += k
		if b.next == len(b.tail) {
			b.next, b.full = 0, true
		}
	}
	return n, nil
}

// Cut is how many bytes the buffer left out.
func (b *traceBuffer) Cut() int64 {
	if b.tail == nil || !b.full {
		return 0
	}
	return b.cut
}

// Bytes is the trace as kept: whole when it fit, else its head, a line
// naming what was left out, and its tail, each cut at a line boundary.
func (b *traceBuffer) Bytes() []byte {
	if b.tail == nil {
		return b.head.Bytes()
	}
	if !b.full {
		return append(bytes.Clone(b.head.Bytes()), b.tail[:b.next]...)
	}
	head := b.head.Bytes()
	left := b.cut
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		left += int64(len(head) - i - 1)
		head = head[:i+1]
	}
	tail := append(bytes.Clone(b.tail[b.next:]), b.tail[:b.next]...)
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		left += int64(i + 1)
		tail = tail[i+1:]
	}
	out := bytes.Clone(head)
	out = fmt.Appendf(out, "… %d bytes of trace left out here: a kept trace holds at most %d bytes, its first and its last\n", left, b.limit)
	return append(out, tail...)
}

func (b *traceBuffer) String() string { return string(b.Bytes()) }

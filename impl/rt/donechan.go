package rt

import "context"

// DoneChan is ctx.Done() as a Chan of r, for code that keeps the channel as
// a value: receiving from it (alone, in a Select, in a range) waits for
// ctx's end as DoneCase does, so the simulator sees the wait. It is nil when
// ctx can never end (ctx.Done() is nil), as Go's is.
func DoneChan(r Runtime, ctx context.Context) *Chan[struct{}] {
	if ctx.Done() == nil {
		return nil
	}
	return &Chan[struct{}]{c: doneChan{r: r, ctx: ctx}}
}

// doneChan is the receive-only channel behind DoneChan: it is closed when
// the context ends, and has no buffer.
type doneChan struct {
	r   Runtime
	ctx context.Context
}

func (d doneChan) Send(any) { panic("rt: send on a context's Done channel") }

func (d doneChan) Recv() (any, bool) {
	d.r.Select([]Case{DoneCase(d.ctx)}, true)
	return nil, false
}

func (d doneChan) Close()   { panic("rt: close of a context's Done channel") }
func (d doneChan) Len() int { return 0 }
func (d doneChan) Cap() int { return 0 }

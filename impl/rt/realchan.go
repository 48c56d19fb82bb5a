package rt

import (
	"reflect"
	"sync"
)

func (realRuntime) NewChan(_ string, size int) AnyChan { return realChan(make(chan any, size)) }

// realChan is a Go channel of any: every operation is the channel's own.
type realChan chan any

func (c realChan) Send(v any)        { c <- v }
func (c realChan) Recv() (any, bool) { v, ok := <-c; return v, ok }
func (c realChan) Close()            { close(c) }
func (c realChan) Len() int          { return len(c) }
func (c realChan) Cap() int          { return cap(c) }

// Select is reflect.Select over the cases' real channels; a nil channel's
// case (and Background's Done, which is nil) is never ready, as in Go.
func (realRuntime) Select(cases []Case, block bool) (int, any, bool) {
	rc := make([]reflect.SelectCase, 0, len(cases)+1)
	for _, c := range cases {
		switch c.Dir {
		case SendDir:
			ch := reflect.ValueOf((chan any)(nil))
			if c.Chan != nil {
				ch = reflect.ValueOf((chan any)(c.Chan.(realChan)))
			}
			v := reflect.ValueOf(&c.Value).Elem()
			rc = append(rc, reflect.SelectCase{Dir: reflect.SelectSend, Chan: ch, Send: v})
		case RecvDir:
			ch := reflect.ValueOf((chan any)(nil))
			if c.Chan != nil {
				ch = reflect.ValueOf((chan any)(c.Chan.(realChan)))
			}
			rc = append(rc, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch})
		case DoneDir:
			var done <-chan struct{}
			if c.Ctx != nil {
				done = c.Ctx.Done()
			}
			rc = append(rc, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(done)})
		}
	}
	if !block {
		rc = append(rc, reflect.SelectCase{Dir: reflect.SelectDefault})
	}
	i, v, ok := reflect.Select(rc)
	if !block && i == len(cases) {
		return -1, nil, false
	}
	if cases[i].Dir != RecvDir || !ok {
		return i, nil, ok && cases[i].Dir == RecvDir
	}
	return i, v.Interface(), true
}

func (realRuntime) NewCond(_ string, l Locker) Cond { return sync.NewCond(l) }

func (realRuntime) NewOnce(string) Once { return &sync.Once{} }

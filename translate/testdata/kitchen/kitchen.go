// Package kitchen uses every construct the translator maps, for its tests.
package kitchen

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

type pool struct {
	sync.Mutex
	rw    sync.RWMutex
	wg    sync.WaitGroup
	once  sync.Once
	cond  *sync.Cond
	jobs  chan int
	out   chan<- int
	ready int
}

// Run hands n jobs to workers over channels and returns their sum.
func Run(n int) int {
	p := &pool{jobs: make(chan int, 2)}
	p.cond = sync.NewCond(&p.Mutex)
	results := make(chan int)
	p.out = results
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 2; i++ {
		p.wg.Add(1)
		go p.work(ctx, i)
	}
	go func() {
		for i := 1; i <= n; i++ {
			p.jobs <- i
		}
		close(p.jobs)
	}()
	go func() { p.wg.Wait(); close(results) }()
	sum := 0
	for v := range results {
		sum += v
	}
	timer := time.NewTimer(time.Millisecond)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	return sum
}

func (p *pool) work(ctx context.Context, id int) {
	defer p.wg.Done()
	p.once.Do(func() { runtime.Gosched() })
	for {
		select {
		case v, ok := <-p.jobs:
			if !ok {
				return
			}
			p.rw.RLock()
			p.out <- v
			p.rw.RUnlock()
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
			return
		}
	}
}

// Leak starts a goroutine that waits forever on a channel nobody sends to.
func Leak() {
	ch := make(chan struct{})
	go func() { <-ch }()
	time.Sleep(time.Millisecond)
}

// Identity waits for a cancel through ctx.Done() kept as a value, and tells
// two pointers apart by their addresses.
func Identity() bool {
	ctx, cancel := context.WithCancel(context.Background())
	done := ctx.Done()
	go cancel()
	select {
	case <-done:
	case <-context.Background().Done():
	}
	<-done
	a, b := new(int), new(int)
	return uintptr(unsafe.Pointer(a)) != uintptr(unsafe.Pointer(b)) && uintptr(unsafe.Pointer(a)) == uintptr(unsafe.Pointer(a))
}

// putter is a named channel type with a method.
type putter chan<- int

func (p putter) Put(v int) { p <- v }

type put interface{ Put(int) }

// Named sends through a method of a named channel type and returns what
// arrived.
func Named() int {
	c := make(chan int, 1)
	var p put = putter(c)
	go p.Put(7)
	q := p.(putter)
	if q != putter(c) || len(q) > 1 {
		return -1
	}
	return <-c
}

// Order ranges over a map keyed by pointers and returns the values in the
// order it met them.
func Order() []int {
	m := map[*int]int{}
	for i := range 5 {
		m[new(int)] = i
	}
	var got []int
	for _, v := range m {
		got = append(got, v)
	}
	return got
}

// Package violations breaks every rule of the determinism contract once, so
// the source scan's own test can see it report each of them.
package violations

import (
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

var mu sync.Mutex // rule: sync

var n atomic.Int64 // rule: sync/atomic (the import)

func everything(m map[string]int) int {
	go func() {}()               // rule: go statement
	_ = time.Now()               // rule: time
	time.Sleep(time.Millisecond) // rule: time
	ch := make(chan int, 1)      // rule: channel
	ch <- 1                      // rule: channel
	<-ch                         // rule: channel
	select {}                    // rule: select
	sum := rand.IntN(3)          // rule: global rand
	for k := range m {           // rule: map range
		sum += len(k)
	}
	for k := range maps.Keys(m) { // rule: map range
		sum += len(k)
	}
	//windtunnel:unordered summing is order-independent
	for _, v := range m {
		sum += v
	}
	_ = time.Now() //windtunnel:realtime a wall-clock benchmark outside every simulated task
	return sum
}

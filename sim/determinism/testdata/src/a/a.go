package a

import "time"

func f(m map[string]int) {
	go func() {}() // want "go statement"
	_ = time.Now() // want "time: time.Now"
	for range m {  // want "map range"
	}
	//windtunnel:unordered order-independent
	for range m {
	}
}

package timerwheel_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// BenchmarkRearm shows that re-arming (Schedule of a scheduled element:
// cancel + insert) costs the same whatever the wheel holds (TW-6).
func BenchmarkRearm(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			w, err := timerwheel.New(origin, time.Second, timerwheel.DefaultBuckets)
			if err != nil {
				b.Fatal(err)
			}
			items := make([]*item, n)
			for i := range items {
				items[i] = &item{id: i}
				arm(w, items[i], origin.Add(time.Duration(i%3600)*time.Second))
			}
			i := 0
			for b.Loop() {
				it := items[i%n]
				w.Schedule(it, origin.Add(time.Duration(i%7200)*time.Second))
				i++
			}
		})
	}
}

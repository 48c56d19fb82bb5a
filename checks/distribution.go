package checks

import "time"

// NumBuckets is the number of staleness buckets in a ClassReport: exactly 0,
// then one bucket per power of ten from below 1µs to below 10s, then ≥ 10s.
const NumBuckets = 10

// bucketBounds are the exclusive upper bounds of buckets 1..8.
var bucketBounds = [NumBuckets - 2]time.Duration{
	time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond,
	time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond,
	time.Second, 10 * time.Second,
}

var bucketLabels = [NumBuckets]string{
	"0", "<1µs", "<10µs", "<100µs", "<1ms", "<10ms", "<100ms", "<1s", "<10s", "≥10s",
}

// BucketLabel names bucket i of ClassReport.Buckets ("0", "<1µs", … "≥10s"),
// or "?" for an index out of range.
func BucketLabel(i int) string {
	if i < 0 || i >= NumBuckets {
		return "?"
	}
	return bucketLabels[i]
}

// bucketOf returns the bucket of a non-negative staleness.
func bucketOf(s time.Duration) int {
	if s <= 0 {
		return 0
	}
	for i, b := range bucketBounds {
		if s < b {
			return i + 1
		}
	}
	return NumBuckets - 1
}

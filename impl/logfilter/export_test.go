package logfilter

// SpanCount returns how many spans a span-aware filter has registered (0
// for a target table), so that tests can see Close take effect.
func SpanCount(f *Filter) int {
	if f.aware == nil {
		return 0
	}
	return f.aware.spanCount()
}

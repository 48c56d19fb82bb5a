//go:build race

package tw

// raceEnabled: the race detector slows the wheel's few instructions and
// the full scan's memory walk by different factors, so the wall-clock
// ratios (TW-6, TW-9) are not judged under it; the exact counts still are.
const raceEnabled = true

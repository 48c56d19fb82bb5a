//go:build race

package scenarios

// twRace: the race detector slows the wheel's few instructions and the
// full scan's memory walk by different factors, so TW-9's speed verdict is
// not judged under it (the exact counts still are).
const twRace = true

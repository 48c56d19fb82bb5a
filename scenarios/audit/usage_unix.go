//go:build unix

package audit

import (
	"syscall"
	"time"
)

func childrenUsage() (Usage, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return Usage{}, false
	}
	return Usage{
		User:        time.Duration(ru.Utime.Nano()),
		System:      time.Duration(ru.Stime.Nano()),
		MinorFaults: int64(ru.Minflt),
	}, true
}

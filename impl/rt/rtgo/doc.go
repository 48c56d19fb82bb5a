// Package rtgo is what translated Go code (see translate) calls instead of
// the go statement, channels, select, sync, time and context: the same
// operations on the rt.Runtime bound with Bind, or on rt.Real() when none is.
//
// Its sync types keep Go's zero values usable: a Mutex, WaitGroup, Once or
// Cond makes its rt object on first use, on the runtime bound then. An
// object made under one runtime and used under another (a package-level
// variable that outlives a simulated run) is made again, fresh.
//
// One runtime is bound at a time (Bind, or Use for a harness): the seeds of
// translated code run one after another.
package rtgo

package rtgo

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// Rander is a runtime with a seeded random stream (the simulator's Rand).
type Rander interface{ Rand() *rand.Rand }

// src is the bound runtime's stream, or a fixed-seed one: a translated
// package never draws from the global source.
func src() *rand.Rand {
	if r, ok := R().(Rander); ok {
		return r.Rand()
	}
	return fallback
}

var fallback = rand.New(rand.NewPCG(1, 2))

// Intn, Int31n, Int63n, Int, Float64 are math/rand's global functions on
// the runtime's stream.
func Intn(n int) int       { return src().IntN(n) }
func Int31n(n int32) int32 { return src().Int32N(n) }
func Int63n(n int64) int64 { return src().Int64N(n) }
func Int() int             { return src().Int() }
func Float64() float64     { return src().Float64() }

// Profile stands for a runtime/pprof profile. The simulator's leak oracle
// replaces the goroutine-leak profile, so WriteTo writes nothing.
type Profile struct{ name string }

// Lookup is pprof.Lookup.
func Lookup(name string) *Profile { return &Profile{name: name} }

// WriteTo writes nothing: the run's leak oracle reports the blocked tasks.
func (p *Profile) WriteTo(io.Writer, int) error { return nil }

// Name is the profile's name.
func (p *Profile) Name() string { return p.name }

// Exit stands for os.Exit and log.Fatal: under a simulated run the task
// panics with the message, which fails the run.
func Exit(msg string) { panic("exit: " + msg) }

// Fatalf is log.Fatalf.
func Fatalf(format string, a ...any) { Exit(fmt.Sprintf(format, a...)) }

// Fatal is log.Fatal.
func Fatal(a ...any) { Exit(fmt.Sprint(a...)) }

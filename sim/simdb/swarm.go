package simdb

import (
	"math/rand/v2"
	"time"
)

// Swarm returns base with its fault kinds switched on or off for one seed,
// as in swarm testing (Groce et al., ISSTA 2012): each kind is on with
// probability ½, and an enabled kind gets a random intensity. A seed that
// leaves most kinds off explores what the others do undisturbed, which a
// single "everything on a little" configuration never does.
//
// Kinds: the slow tail (1–10% of statements take 0.2–3 s), transient read
// errors (0.5–5%), transient write errors (0.5–5%), and pool pressure (a
// pool of 1–4 connections, never more than base's, so checkouts queue). The base latency, the
// statements and the hook are kept from base. Record the result's String in
// the run header with s.Note.
func Swarm(r *rand.Rand, base Config) Config {
	c := base
	c.Latency.SlowProb, c.Latency.SlowMin, c.Latency.SlowMax = 0, 0, 0
	c.ReadErrorProb, c.WriteErrorProb = 0, 0
	if on(r) {
		c.Latency.SlowProb = between(r, 0.01, 0.10)
		c.Latency.SlowMin = 200 * time.Millisecond
		c.Latency.SlowMax = time.Duration(between(r, 0.5, 3) * float64(time.Second))
	}
	if on(r) {
		c.ReadErrorProb = between(r, 0.005, 0.05)
	}
	if on(r) {
		c.WriteErrorProb = between(r, 0.005, 0.05)
	}
	if on(r) {
		c.PoolSize = min(1+r.IntN(4), c.withDefaults().PoolSize)
	}
	return c
}

func on(r *rand.Rand) bool { return r.IntN(2) == 1 }

func between(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

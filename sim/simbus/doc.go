// Package simbus is a simulated pub/sub bus for deterministic simulations,
// modelled on Redis pub/sub and built on package sim. A publisher never
// waits. Each subscriber's link can lose, delay, duplicate and reorder
// messages, and disconnect for fixed partition windows or random reconnect
// gaps. It then loses everything sent (or in flight) meanwhile, as Redis
// does for a disconnected subscriber.
//
// Each subscriber has a bounded queue of messages in flight and one
// delivery task that calls its handler, one message at a time, in order of
// arrival. A message that finds the queue full is dropped and counted:
// nothing blocks and nothing grows without limit.
//
// Every fate is decided at the publish instant from the run's world source
// (sim.Sim.Rand), counted, and traced with sim.Sim.Tracef, so a failure
// report's trace shows which invalidation was lost and why. Afterwards,
// Subscriber.Records says for every published message whether it was
// delivered (when, how often, whether out of order), lost (with its Cause)
// or still pending; Stats and Registry hold the counters. Every message is
// in exactly one of those states: Sent = Delivered + Lost + Pending.
//
// Every fault is optional to a shrinker. A delay from the tail, a
// reordering hold, a random loss, a duplicate, each reconnect gap and each
// partition window asks sim.Sim.Keep(sim.KeepFault) once decided. A
// dropped one takes the fault-free path without drawing more than the fault
// would have. A recorded run (sim.Config.Record) shows every message sent
// (record.EventSend, by the publisher), received and lost (by subscriber),
// tied by its number, and every fault injected.
//
// Reliable() is the perfect link for single-pod linearizability scenarios;
// Swarm picks a fault plan per seed, whose String goes in the run header
// (sim.Sim.Note).
//
// Close unsubscribes (or closes the whole bus): undelivered messages are
// lost with CauseClosed and the delivery tasks end. When the run ends the
// simulator stops them anyway.
package simbus

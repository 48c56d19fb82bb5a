// Package flight is the real-world side of a flight test: relays running
// the production wiring (impl/relay on rt.Real(), pgstore, redisbus) as
// separate processes, the line protocol a driver uses to ask them
// questions, the driver's client for it, a Toxiproxy client for the
// faults between each relay and each server, and the writer that commits
// the seeds' writes with a commit-log row in the same transaction.
//
// A relay process (cmd relayd) reads one JSON Request a line on stdin and
// answers one JSON Response a line on stdout, in any order (IDs match
// them). It stamps each read's invocation and response with the machine's
// wall clock (UnixNano), the clock PostgreSQL's clock_timestamp() reads
// too, so the driver can lay the reads next to the commit log.
//
// The checkers live elsewhere (scenarios/cmd/flight): impl does not import
// checks or scenarios. This package is at the edge of the runtime seam:
// real goroutines, the network and the wall clock, never simulated.
package flight

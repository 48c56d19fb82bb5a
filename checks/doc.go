// Package checks holds the pure checkers that judge recorded histories
// against the database's commit log: exact staleness, linearizability
// (porcupine), and the cross-check between the two. Every staleness claim
// (OC-2, OC-4, OC-7, MS-2, MS-10) and every linearizability claim (MS-3,
// OC-6, DR-7) is decided by a function of this package.
//
// # Recording
//
// A scenario records each client operation with a Recorder: Begin at the
// call, End at the response, virtual ns from the simulator's clock. The
// simulated database records every commit in a Truth: Declare a key with its
// initial value, then Commit in instant order. Neither uses locks or
// goroutines, because in the simulator exactly one task runs at a time. The
// database's commit log is the truth; the recorded outputs are judged against
// it.
//
// # Exact staleness
//
// truth(k, t) is the value of the latest commit of k with At ≤ t (a commit
// takes effect at its instant, inclusive), else k's initial value. For a
// read r of key k that returned a,
//
//	S(r) = max(0, invoke(r) − L),   L = sup{ t ≤ return(r) : truth(k, t) = a }.
//
// L is a supremum: if a stopped being true at a commit instant t ≤ return(r),
// then L = t. If truth(k) was never a at any instant up to return(r), the
// answer is a phantom (infinite staleness): it was never true. Reads that
// granted access and reads that denied it are reported apart. Grant-staleness
// bounds how long a revoked permission survives; deny-staleness bounds how
// long a new one goes missing. Each class reports the maximum and the witness
// read for it, with L and the commit that ended its answer's truth. It also
// reports the phantoms, percentiles and a power-of-ten distribution. A claim
// "at most Δ" holds when there is no phantom and max S ≤ Δ (Report.Holds).
// Staleness is O((n+m) log(n+m)) for n reads and m commits: a binary search
// per read in its key's commit list.
//
// # Linearizability
//
// Linearizable checks a history of point-in-time register operations on
// boolean keys with porcupine (github.com/anishathalye/porcupine), using the
// register model of package model partitioned by key. On Illegal it names the
// offending keys and WriteVisualization writes porcupine's HTML view of them
// for the failure report.
//
// # Why the two checkers must agree
//
// "Every read is at most Δ stale" says exactly that each read's answer was
// true at some instant in [invoke − Δ, return]. That is linearizability of
// the history in which each read's invocation is moved back by Δ and each
// commit is a write at its instant. CrossCheck builds that history, runs both
// checkers and reports whether porcupine says Ok exactly when the exact
// checker says the bound holds. The two are independent implementations of
// one definition. Scenarios run the cross-check on every seed, so a bug in
// either (an off-by-one at a boundary, a mishandled tie) shows up as a
// disagreement rather than as a wrong verdict on a claim. CrossCheck's
// documentation gives the encoding and the argument for exact agreement.
package checks

package checks

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// CrossCheck runs the exact staleness checker and, independently, porcupine
// on the Δ-shifted history, and reports whether they agree:
//
//	(porcupine says Ok)  ==  (no phantom and max staleness ≤ delta, both classes)
//
// detail describes both verdicts (and, on disagreement or bad input, why).
// Bad input (see Staleness) or a negative delta yields agree = false.
//
// # Encoding
//
// Times are used as they are, in ns (the identity encoding). What makes the
// two checkers agree exactly is how the history is built:
//
//   - Every instant at which key k has commits becomes ONE write, a point
//     operation [t, t] whose value is the last commit at t. truth(k, t) is
//     defined by the latest commit with At ≤ t, so the earlier values at t
//     were never true at any instant. As separate writes, porcupine could
//     order a read between them and accept an answer the exact checker calls
//     a phantom.
//   - Every read r of k becomes a read [invoke(r) − delta, return(r)] that
//     observed its answer (saturating at the smallest int64).
//   - The model starts k at its initial value.
//
// Porcupine sorts events by time and, at equal times, puts calls before
// returns (its intervals are closed). Writes of one key are then totally
// ordered, and reads change nothing. Read r can be placed after write j and
// before write j+1 exactly when t_j ≤ return(r) and t_{j+1} ≥ invoke(r) −
// delta (equal instants touch, so they are concurrent). So porcupine accepts
// r iff some step j with value a = r's answer has t_j ≤ return(r) and t_{j+1}
// ≥ invoke(r) − delta. The exact checker's L is the supremum of {t ≤
// return(r) : truth(t) = a}. That is the max over such steps of min(t_{j+1},
// return(r)). And S ≤ delta ⇔ L ≥ invoke(r) − delta ⇔ the same condition,
// because return(r) ≥ invoke(r) − delta. Reads constrain only their own
// placement among the writes, so the history is accepted iff every read is.
// The boundaries follow. S == delta (a commit at exactly invoke − delta) is
// Ok. A commit at exactly return(r) may or may not be seen. A commit at
// exactly invoke − delta − 1 is not Ok.
func CrossCheck(reads []Read, truth Truth, delta time.Duration) (agree bool, detail string) {
	r := CrossCheckWithin(reads, truth, delta, 0)
	return r.Agree, r.Detail
}

// CrossResult is the outcome of CrossCheckWithin.
type CrossResult struct {
	// Agree: porcupine and the exact checker gave the same verdict.
	Agree bool
	// Undecided: porcupine ran out of time before a verdict, so nothing
	// was compared (Agree is false). Proving a long history Illegal can
	// take porcupine exponential time, which is why callers that check a
	// violating history bound it.
	Undecided bool
	Detail    string
}

// CrossCheckWithin is CrossCheck with a bound on porcupine's time (0: no
// bound). An undecided comparison is reported as such, never as agreement.
func CrossCheckWithin(reads []Read, truth Truth, delta, timeout time.Duration) CrossResult {
	if delta < 0 {
		return CrossResult{Detail: fmt.Sprintf("cross-check: negative delta %v", delta)}
	}
	rep, err := Staleness(reads, truth)
	if err != nil {
		return CrossResult{Detail: fmt.Sprintf("cross-check: %v", err)}
	}
	exactOK := rep.Holds(delta)
	ops, init := shiftedHistory(reads, truth, delta)
	lin := Linearizable(ops, init, timeout)
	if lin.Err != nil {
		return CrossResult{Detail: fmt.Sprintf("cross-check: building the shifted history: %v", lin.Err)}
	}
	if lin.Verdict == porcupine.Unknown {
		return CrossResult{Undecided: true, Detail: fmt.Sprintf("cross-check at Δ=%v: porcupine undecided within %v; the exact checker says holds=%t", delta, timeout, exactOK)}
	}
	linOK := lin.Verdict == porcupine.Ok
	agree := linOK == exactOK
	var detail string
	detail = fmt.Sprintf("cross-check at Δ=%v: exact says holds=%t (grant max %v, %d phantom(s); deny max %v, %d phantom(s)); porcupine says %s",
		delta, exactOK, rep.Grant.MaxStaleness, rep.Grant.Phantoms, rep.Deny.MaxStaleness, rep.Deny.Phantoms, lin.Verdict)
	if len(lin.Keys) > 0 {
		detail += fmt.Sprintf(" (offending keys %q)", lin.Keys)
	}
	if !agree {
		detail = "DISAGREE: " + detail + "\n" + rep.String()
	}
	return CrossResult{Agree: agree, Detail: detail}
}

// shiftedHistory builds the porcupine history described in CrossCheck's
// encoding: one write per commit instant of each key that has reads (in
// sorted key order), then every read with its call moved back by delta.
// Writes appear as pod -1, client 0 ("the database"); read i as pod 0,
// client i, so each read has its own row in a visualization.
func shiftedHistory(reads []Read, truth Truth, delta time.Duration) ([]LinOp, map[string]bool) {
	init := make(map[string]bool)
	for _, r := range reads {
		init[r.Key] = truth[r.Key].Initial
	}
	var ops []LinOp
	for _, k := range truth.Keys() {
		if _, ok := init[k]; !ok {
			continue
		}
		ix := newKeyIndex(truth[k])
		for i, at := range ix.at {
			ops = append(ops, LinOp{Key: k, Write: true, Value: ix.val[i], Call: at, Return: at, Pod: -1})
		}
	}
	for i, r := range reads {
		call := r.Invoke - int64(delta)
		if call > r.Invoke { // wrapped below math.MinInt64
			call = math.MinInt64
		}
		ops = append(ops, LinOp{Key: r.Key, Value: r.Granted, Call: call, Return: r.Return, Client: i})
	}
	return ops, init
}

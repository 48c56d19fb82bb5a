package checks

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/windtunnel/windtunnel/model"
)

// LinOp is one operation on a boolean register per key, for Linearizable: a
// write sets Key to Value; a read observed Value. Call and Return are virtual
// ns and form a closed interval (porcupine's convention: operations that
// touch at an instant are concurrent). Pod and Client name the issuer in the
// visualization.
type LinOp struct {
	Key    string
	Write  bool
	Value  bool
	Call   int64
	Return int64
	Pod    int
	Client int
}

// LinResult is the verdict of Linearizable.
type LinResult struct {
	// Verdict is porcupine's: Ok, Illegal, or Unknown (the timeout expired
	// before a verdict, or the input was rejected: see Err).
	Verdict porcupine.CheckResult
	// Keys lists, in sorted order, the keys whose own history is not
	// linearizable (Illegal only; it can be empty if re-checking the keys one
	// by one ran out of time).
	Keys []string
	// Ops is the number of operations checked.
	Ops int
	// Err is non-nil when the input was rejected (an operation returning
	// before its call, or a key without an initial value); nothing was
	// checked and Verdict is Unknown.
	Err error

	model   porcupine.Model
	info    porcupine.LinearizationInfo
	hasInfo bool
}

// Linearizable checks with porcupine whether ops, a history of independent
// boolean registers with the given initial values, is linearizable (MS-3's
// fence; OC-6's known deviation, which it must find). The model
// (model.NewRegister) partitions by key, so each key is checked on its own. A
// timeout of 0 means no limit (the verdict is then never Unknown for valid
// input); otherwise it bounds the whole call.
//
// On Illegal, the offending keys are found by re-checking each key alone,
// and the porcupine visualization of those keys is kept for
// WriteVisualization.
func Linearizable(ops []LinOp, init map[string]bool, timeout time.Duration) LinResult {
	res := LinResult{Verdict: porcupine.Unknown, Ops: len(ops)}
	hist, err := toOperations(ops, init)
	if err != nil {
		res.Err = err
		return res
	}
	m := model.NewRegister(init)
	res.model = m
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	res.Verdict = porcupine.CheckOperationsTimeout(m, hist, remaining(deadline))
	if res.Verdict != porcupine.Illegal {
		return res
	}
	var bad []porcupine.Operation
	for _, part := range m.Partition(hist) {
		if timeout > 0 && !time.Now().Before(deadline) {
			break
		}
		if porcupine.CheckOperationsTimeout(m, part, remaining(deadline)) == porcupine.Illegal {
			res.Keys = append(res.Keys, part[0].Input.(model.RegisterInput).Key)
			bad = append(bad, part...)
		}
	}
	if len(bad) == 0 {
		bad = hist
	}
	verdict, info := porcupine.CheckOperationsVerbose(m, bad, remaining(deadline))
	if verdict == porcupine.Illegal {
		res.info, res.hasInfo = info, true
	}
	return res
}

// remaining converts an absolute deadline to porcupine's relative timeout,
// where 0 means unlimited: an expired deadline becomes the smallest positive
// timeout so that it is not mistaken for "no limit".
func remaining(deadline time.Time) time.Duration {
	if deadline.IsZero() {
		return 0
	}
	return max(time.Until(deadline), time.Nanosecond)
}

// toOperations validates ops and converts them to porcupine operations, with
// one dense porcupine client ID per (pod, client) pair in sorted order, as
// the visualization requires.
func toOperations(ops []LinOp, init map[string]bool) ([]porcupine.Operation, error) {
	type issuer struct{ pod, client int }
	var issuers []issuer
	for i, op := range ops {
		if op.Call > op.Return {
			return nil, fmt.Errorf("checks: op #%d on %q: call %d ns is after return %d ns", i, op.Key, op.Call, op.Return)
		}
		if _, ok := init[op.Key]; !ok {
			return nil, fmt.Errorf("checks: op #%d: key %q has no initial value", i, op.Key)
		}
		issuers = append(issuers, issuer{op.Pod, op.Client})
	}
	slices.SortFunc(issuers, func(a, b issuer) int {
		return cmp.Or(cmp.Compare(a.pod, b.pod), cmp.Compare(a.client, b.client))
	})
	issuers = slices.Compact(issuers)
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		id, _ := slices.BinarySearchFunc(issuers, issuer{op.Pod, op.Client}, func(a, b issuer) int {
			return cmp.Or(cmp.Compare(a.pod, b.pod), cmp.Compare(a.client, b.client))
		})
		var output any
		if !op.Write {
			output = op.Value
		}
		out[i] = porcupine.Operation{
			ClientId: id,
			Input:    model.RegisterInput{Key: op.Key, Write: op.Write, Value: op.Value},
			Output:   output,
			Call:     op.Call,
			Return:   op.Return,
			Metadata: fmt.Sprintf("pod %d client %d", op.Pod, op.Client),
		}
	}
	return out, nil
}

// WriteVisualization writes porcupine's HTML visualization of the offending
// keys of an Illegal result into dir (created if needed) and returns the
// file's path, for the failure report to name. The file name is derived from
// the offending keys, so the same failure rewrites the same file.
func (r LinResult) WriteVisualization(dir string) (string, error) {
	if r.Verdict != porcupine.Illegal {
		return "", fmt.Errorf("checks: no visualization: the verdict is %s, not Illegal", r.Verdict)
	}
	if !r.hasInfo {
		return "", errors.New("checks: no visualization: porcupine ran out of time building it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("checks: visualization directory: %w", err)
	}
	path := filepath.Join(dir, visualizationName(r.Keys))
	if err := porcupine.VisualizePath(r.model, r.info, path); err != nil {
		return "", fmt.Errorf("checks: writing visualization: %w", err)
	}
	return path, nil
}

// visualizationName is "linearizability-<first key>-<hash of all keys>.html"
// with the key reduced to safe file-name characters.
func visualizationName(keys []string) string {
	h := fnv.New64a()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	first := "history"
	if len(keys) > 0 {
		first = keys[0]
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		default:
			return '_'
		}
	}, first)
	if len(safe) > 40 {
		safe = safe[:40]
	}
	return fmt.Sprintf("linearizability-%s-%016x.html", safe, h.Sum64())
}

// String summarizes the verdict for a failure report.
func (r LinResult) String() string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("linearizability: not checked: %v", r.Err)
	case r.Verdict == porcupine.Illegal:
		return fmt.Sprintf("linearizability: Illegal over %d ops; offending keys %q", r.Ops, r.Keys)
	default:
		return fmt.Sprintf("linearizability: %s over %d ops", r.Verdict, r.Ops)
	}
}

package checks

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/windtunnel/windtunnel/model"
)

// CollectorLinResult is porcupine's verdict on a collector history against
// model.CollectorModel (DR-7).
type CollectorLinResult struct {
	Verdict porcupine.CheckResult
	// Ops is the number of operations checked; Initial the preloaded points
	// folded into the initial state.
	Ops, Initial int

	model   porcupine.Model
	info    porcupine.LinearizationInfo
	hasInfo bool
}

// CollectorLinearizable checks with porcupine whether the operations of
// ops that include accepts (nil: all), from the initial state holding
// initial, are linearizable against model.CollectorModel: records, drains
// (of points), prunes and queries; snapshots have no model operation and
// are left out. Each operation's interval is its [Call, Return] on the
// world's logical clock: nothing but call and return order. A timeout of 0
// means no limit; Unknown means it ran out.
func CollectorLinearizable(initial []model.Point, ops []CollectorOp, include func(CollectorOp) bool, timeout time.Duration) (CollectorLinResult, error) {
	var hist []porcupine.Operation
	clients := map[string]int{} // looked up only
	for _, op := range ops {
		if op.Err != nil || op.Kind == CollectorSnapshot || (include != nil && !include(op)) {
			continue
		}
		if op.Aggregated {
			return CollectorLinResult{}, fmt.Errorf("checks: %s aggregated its output; the collector model checks drained points (drain points, not buckets)", op)
		}
		id, ok := clients[op.Task]
		if !ok {
			id = len(clients)
			clients[op.Task] = id
		}
		hist = append(hist, porcupine.Operation{ClientId: id, Input: op.In, Output: op.Out, Call: op.Call, Return: op.Return})
	}
	m := keyedCollectorModel(model.NewCollectorState(initial...))
	res := CollectorLinResult{Ops: len(hist), Initial: len(initial), model: m}
	res.Verdict, res.info = porcupine.CheckOperationsVerbose(m, hist, timeout)
	res.hasInfo = res.Verdict == porcupine.Illegal
	return res, nil
}

// keyedCollectorModel is model.CollectorModel starting from init, with states
// compared per key. CollectorStep's answers depend only on the order of the
// points within each key: a drain groups by key, a query reads one key, a
// prune counts. So two states that differ only in how keys interleave are the
// same state. Telling porcupine so lets it merge the orders of concurrent
// records on different keys instead of exploring each.
func keyedCollectorModel(init model.CollectorState) porcupine.Model {
	m := model.CollectorModel
	m.Init = func() interface{} { return init }
	m.Equal = func(a, b interface{}) bool {
		return slices.Equal(model.GroupByKey(a.(model.CollectorState).Points()), model.GroupByKey(b.(model.CollectorState).Points()))
	}
	m.Hash = func(state interface{}) uint64 {
		perKey := map[string]uint64{} // folded below with a commutative sum
		for _, p := range state.(model.CollectorState).Points() {
			h := perKey[p.Key]*0x100000001b3 ^ uint64(p.TS)
			perKey[p.Key] = h*0x100000001b3 ^ math.Float64bits(p.Value)
		}
		var sum uint64
		//windtunnel:unordered a commutative sum
		for k, h := range perKey {
			f := fnv.New64a()
			f.Write([]byte(k))
			sum += splitmix(f.Sum64() ^ h)
		}
		return sum
	}
	return m
}

// splitmix is splitmix64's finalizer.
func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// ConcurrentWithDrain reports whether op's interval overlaps that of any
// other drain in ops.
func ConcurrentWithDrain(op CollectorOp, ops []CollectorOp) bool {
	return slices.ContainsFunc(ops, func(d CollectorOp) bool {
		return d.Kind == CollectorDrain && d.ID != op.ID && d.Call < op.Return && op.Call < d.Return
	})
}

// WriteVisualization writes porcupine's HTML visualization of an Illegal
// result into dir as name and returns its path.
func (r CollectorLinResult) WriteVisualization(dir, name string) (string, error) {
	if !r.hasInfo {
		return "", errors.New("checks: no visualization: the verdict is not Illegal")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := porcupine.VisualizePath(r.model, r.info, path); err != nil {
		return "", err
	}
	return path, nil
}

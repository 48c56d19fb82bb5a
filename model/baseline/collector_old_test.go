package baseline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/model/baseline"
)

func TestOldCollectorIsThePlainPartition(t *testing.T) {
	o := baseline.NewOldCollector(rt.Real())
	pts := []model.Point{{Key: "b", TS: 5, Value: 1}, {Key: "a", TS: 1, Value: 2}, {Key: "a", TS: 9, Value: 3}, {Key: "b", TS: 2, Value: 4}, {Key: "a", TS: 0, Value: 5}}
	for _, p := range pts {
		o.Record(p.Key, p.TS, p.Value)
	}
	drained, held := o.Drain(5)
	want, _ := model.Partition(pts, 5)
	assert.Equal(t, model.GroupByKey(want), drained)
	assert.GreaterOrEqual(t, held, 0*held)
	assert.EqualValues(t, 2, o.Len())
	drained, _ = o.Drain(100)
	assert.Equal(t, []model.Point{{Key: "a", TS: 9, Value: 3}, {Key: "b", TS: 5, Value: 1}}, drained)
	assert.EqualValues(t, 0, o.Len())
}

func TestOldCollectorPrunesAndFlushes(t *testing.T) {
	o := baseline.NewOldCollector(rt.Real())
	pts := []model.Point{{Key: "b", TS: 15, Value: 1}, {Key: "a", TS: 1, Value: 2}, {Key: "a", TS: 29, Value: 3}, {Key: "b", TS: 12, Value: 4},
		{Key: "a", TS: 0, Value: 5}, {Key: "a", TS: 11, Value: 6}, {Key: "a", TS: 5, Value: 7}}
	for _, p := range pts {
		o.Record(p.Key, p.TS, p.Value)
	}
	assert.EqualValues(t, 1, o.Prune(1), "a@0")
	assert.EqualValues(t, 0, o.Prune(1))
	_, kept := model.Partition(pts, 1)
	drained, _ := model.Partition(kept, 20)
	assert.Equal(t, model.Aggregate(drained, 10), o.Flush(20, 10))
	assert.Equal(t, []model.Bucket{{Key: "a", Start: 20, Count: 1, Sum: 3, Min: 3, Max: 3}}, o.Flush(100, 10))
	assert.EqualValues(t, 0, o.Len())
}

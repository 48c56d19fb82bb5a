package shard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sample stands for the harness's sample type, which this package never
// looks into.
type sample struct {
	Worst float64
	Seen  bool
}

func shardDir(t *testing.T, test, shard string, seeds int, indices ...int) string {
	dir := t.TempDir()
	path := samplesPath(dir, test)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	enc := json.NewEncoder(f)
	require.NoError(t, enc.Encode(shardHeader{Test: test, Shard: shard, Seeds: seeds}))
	for _, i := range indices {
		require.NoError(t, enc.Encode(Seed[sample]{Seed: uint64(100 + i), Index: i, Sample: sample{Worst: float64(i), Seen: true}}))
	}
	require.NoError(t, f.Close())
	return dir
}

func TestShardSamplesMergeInSeedOrderOrAreRefused(t *testing.T) {
	a := shardDir(t, "TestX", "0/2", 4, -1, 0, 1)
	b := shardDir(t, "TestX", "1/2", 4, 2, 3)
	got, err := Read[sample]("TestX", []string{b, a})
	require.NoError(t, err)
	var idx []int
	for _, s := range got {
		idx = append(idx, s.Index)
	}
	assert.Equal(t, []int{-1, 0, 1, 2, 3}, idx, "corpus first, then by index, whatever the order of the shards")

	_, err = Read[sample]("TestX", []string{a})
	assert.ErrorContains(t, err, "shard 1/2 is missing")
	_, err = Read[sample]("TestX", []string{a, shardDir(t, "TestX", "1/2", 4, 1, 2, 3)})
	assert.ErrorContains(t, err, "in two shards")
	_, err = Read[sample]("TestX", []string{a, shardDir(t, "TestX", "1/2", 4, 2)})
	assert.ErrorContains(t, err, "seed index 3 of TestX is in no shard")
	_, err = Read[sample]("TestX", []string{a, shardDir(t, "TestX", "1/2", 6, 2, 3)})
	assert.ErrorContains(t, err, "not one sweep")
	_, err = Read[sample]("TestY", []string{a})
	assert.ErrorContains(t, err, "no samples of TestY")
}

package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeShards(t *testing.T, metas ...ShardMeta) []string {
	var dirs []string
	for _, m := range metas {
		d := t.TempDir()
		require.NoError(t, WriteShardMeta(d, m))
		dirs = append(dirs, d)
	}
	return dirs
}

func TestShardsMergeIntoOneSweepOrAreRefused(t *testing.T) {
	ids := []string{"a", "b", "c"}
	s0 := ShardMeta{Commit: "c1", ClaimsHash: ClaimsHash(), Shard: "0/2", Seeds: 4, MutantSeeds: 3, MutantIDs: ids,
		Mutants: []MutantResult{{ID: "a", Caught: true}, {ID: "c", Caught: true}}}
	s1 := s0
	s1.Shard, s1.Mutants = "1/2", []MutantResult{{ID: "b"}}
	_, ms, err := ReadShards(writeShards(t, s0, s1))
	require.NoError(t, err)
	require.Len(t, ms, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{ms[0].ID, ms[1].ID, ms[2].ID}, "catalogue order")

	pattern := s1
	pattern.Run = "^TestOC1_"
	_, _, err = ReadShards(writeShards(t, s0, pattern))
	assert.ErrorContains(t, err, "ran the claim checks matching")
	other := s1
	other.Commit = "c2"
	_, _, err = ReadShards(writeShards(t, s0, other))
	assert.ErrorContains(t, err, "from commit c2")
	claimsOther := s1
	claimsOther.ClaimsHash = "x"
	_, _, err = ReadShards(writeShards(t, s0, claimsOther))
	assert.ErrorContains(t, err, "another CLAIMS.md")
	_, _, err = ReadShards(writeShards(t, s0))
	assert.ErrorContains(t, err, "shard 1/2 is missing")
	_, _, err = ReadShards(writeShards(t, s0, s0))
	assert.ErrorContains(t, err, "given twice")
	third := s1
	third.Shard = "1/3"
	_, _, err = ReadShards(writeShards(t, s0, third))
	assert.ErrorContains(t, err, "the others are of 2")
	lost := s1
	lost.Mutants = nil
	_, _, err = ReadShards(writeShards(t, s0, lost))
	assert.ErrorContains(t, err, "mutant b was run by no shard")
	d := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(d, "shard.json"), []byte(`{"commit":"c1","bogus":1}`), 0o644))
	_, _, err = ReadShards([]string{d})
	assert.ErrorContains(t, err, "unknown field")
	_, _, err = ReadShards([]string{t.TempDir()})
	assert.ErrorContains(t, err, "not an audit shard")
}

package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinearizableFindsStaleReadAfterCompletedWrite(t *testing.T) {
	ops := []LinOp{
		{Key: "u1/c1", Write: true, Value: false, Call: 0, Return: 10, Pod: 0, Client: 0}, // revoke completes at 10
		{Key: "u1/c1", Value: true, Call: 20, Return: 30, Pod: 1, Client: 4},              // still granted after it
		{Key: "u2/c1", Write: true, Value: true, Call: 0, Return: 10, Pod: 0, Client: 0},
		{Key: "u2/c1", Value: true, Call: 20, Return: 30, Pod: 1, Client: 4}, // fine
	}
	res := Linearizable(ops, map[string]bool{"u1/c1": true, "u2/c1": false}, 0)
	require.NoError(t, res.Err)
	assert.Equal(t, porcupine.Illegal, res.Verdict)
	assert.Equal(t, []string{"u1/c1"}, res.Keys)
	assert.Equal(t, 4, res.Ops)
	assert.Contains(t, res.String(), `offending keys ["u1/c1"]`)

	dir := filepath.Join(t.TempDir(), "artifacts")
	path, err := res.WriteVisualization(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(path))
	assert.True(t, strings.HasPrefix(filepath.Base(path), "linearizability-u1_c1-"), path)
	html, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")
	assert.Contains(t, string(html), `read(\"u1/c1\") -\u003e true`, "the operations are described by the model")

	again, err := res.WriteVisualization(dir)
	require.NoError(t, err)
	assert.Equal(t, path, again, "same failure, same file")
}

func TestLinearizableAcceptsCorrectHistories(t *testing.T) {
	ops := []LinOp{
		{Key: "k", Write: true, Value: false, Call: 0, Return: 10},
		{Key: "k", Value: true, Call: 5, Return: 12, Pod: 1},   // concurrent with the revoke
		{Key: "k", Value: false, Call: 11, Return: 12, Pod: 2}, // after it
		{Key: "k", Value: false, Call: 10, Return: 10, Pod: 3}, // touches its return: concurrent
	}
	res := Linearizable(ops, map[string]bool{"k": true}, 0)
	require.NoError(t, res.Err)
	assert.Equal(t, porcupine.Ok, res.Verdict)
	assert.Empty(t, res.Keys)
	_, err := res.WriteVisualization(t.TempDir())
	assert.ErrorContains(t, err, "verdict is Ok")

	empty := Linearizable(nil, nil, 0)
	assert.Equal(t, porcupine.Ok, empty.Verdict)
}

func TestLinearizableUsesTheInitialValuePerKey(t *testing.T) {
	ops := []LinOp{{Key: "k", Value: true, Call: 0, Return: 1}}
	assert.Equal(t, porcupine.Ok, Linearizable(ops, map[string]bool{"k": true}, 0).Verdict)
	assert.Equal(t, porcupine.Illegal, Linearizable(ops, map[string]bool{"k": false}, 0).Verdict)
}

func TestLinearizableRejectsBadInput(t *testing.T) {
	res := Linearizable([]LinOp{{Key: "k", Call: 2, Return: 1}}, map[string]bool{"k": true}, 0)
	assert.ErrorContains(t, res.Err, "call 2 ns is after return 1 ns")
	assert.Equal(t, porcupine.Unknown, res.Verdict)
	assert.Contains(t, res.String(), "not checked")

	res = Linearizable([]LinOp{{Key: "k"}}, map[string]bool{}, 0)
	assert.ErrorContains(t, res.Err, `key "k" has no initial value`)
	_, err := res.WriteVisualization(t.TempDir())
	assert.Error(t, err)
}

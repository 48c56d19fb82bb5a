package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecorderRecordsCompletedOpsInBeginOrder(t *testing.T) {
	r := NewRecorder(0)
	a := r.Begin(1, 2, "check", "u1/c1", "input-a", 100)
	b := r.Begin(1, 3, "check", "u1/c2", nil, 150)
	c := r.Begin(2, 0, "write", "u1/c1", true, 160)
	require.NoError(t, b.End(false, 170))
	require.NoError(t, a.End(true, 200))
	require.Equal(t, 3, r.Len())

	h, err := r.History()
	require.NoError(t, err)
	assert.Equal(t, History{
		{Pod: 1, Client: 2, Kind: "check", Key: "u1/c1", Input: "input-a", Output: true, Invoke: 100, Return: 200},
		{Pod: 1, Client: 3, Kind: "check", Key: "u1/c2", Output: false, Invoke: 150, Return: 170},
	}, h)
	assert.Equal(t, []Op{{Pod: 2, Kind: "write", Key: "u1/c1", Input: true, Invoke: 160}}, r.Unfinished())

	require.NoError(t, c.End(nil, 160), "a zero-length op is fine")
	h, err = r.History()
	require.NoError(t, err)
	assert.Len(t, h, 3)
	assert.Empty(t, r.Unfinished())
}

func TestRecorderReportsMisuse(t *testing.T) {
	r := NewRecorder(2)
	a := r.Begin(0, 0, "check", "k", nil, 10)
	b := r.Begin(0, 1, "check", "k", nil, 10)
	dropped := r.Begin(0, 2, "check", "k", nil, 10)

	require.NoError(t, a.End(true, 11))
	assert.ErrorContains(t, a.End(false, 12), "ended twice")
	assert.ErrorContains(t, b.End(true, 9), "return 9 ns is before invoke 10 ns")
	assert.ErrorContains(t, dropped.End(true, 11), "dropped")
	assert.Error(t, Pending{}.End(true, 1))

	h, err := r.History()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ended twice")
	assert.Contains(t, err.Error(), "before invoke")
	assert.Contains(t, err.Error(), "1 operation(s) dropped beyond the recorder's bound of 2")
	require.Len(t, h, 1)
	assert.Equal(t, true, h[0].Output, "the first End stands")

	var nilRec *Recorder
	assert.Error(t, nilRec.Begin(0, 0, "x", "k", nil, 0).End(nil, 0))
}

func TestHistoryConversions(t *testing.T) {
	h := History{
		{Kind: "check", Key: "k", Output: true, Invoke: 1, Return: 2},
		{Kind: "write", Key: "k", Input: false, Invoke: 3, Return: 4, Pod: 1, Client: 7},
		{Kind: "other", Key: "k"},
		{Kind: "check", Key: "j", Output: false, Invoke: 5, Return: 6},
	}
	reads, err := h.Reads("check")
	require.NoError(t, err)
	assert.Equal(t, []Read{
		{ID: 0, Key: "k", Invoke: 1, Return: 2, Granted: true},
		{ID: 3, Key: "j", Invoke: 5, Return: 6, Granted: false},
	}, reads)

	ops, err := h.LinOps("check", "write")
	require.NoError(t, err)
	assert.Equal(t, []LinOp{
		{Key: "k", Value: true, Call: 1, Return: 2},
		{Key: "k", Write: true, Value: false, Call: 3, Return: 4, Pod: 1, Client: 7},
		{Key: "j", Value: false, Call: 5, Return: 6},
	}, ops)

	_, err = History{{Kind: "check", Key: "k", Output: "yes"}}.Reads("check")
	assert.ErrorContains(t, err, "output string is not a bool")
	_, err = History{{Kind: "write", Key: "k", Input: 1}}.LinOps("check", "write")
	assert.ErrorContains(t, err, "must be a bool")
}

package model

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFullScanQueueOrdersByLastActivity(t *testing.T) {
	f := NewFullScanQueue(3)
	now := time.Unix(0, 0)
	a, _ := f.Open(now)
	b, _ := f.Open(now)
	c, _ := f.Open(now)
	assert.Equal(t, []uint64{a.ID(), b.ID(), c.ID()}, f.Queue())
	f.NetActivity(a, now)
	assert.Equal(t, []uint64{b.ID(), c.ID(), a.ID()}, f.Queue())
	f.Close(c)
	assert.Equal(t, []uint64{b.ID(), a.ID()}, f.Queue())
	d, _ := f.Open(now)
	e, evicted := f.Open(now) // full: b, the least recently active, goes
	if assert.NotNil(t, evicted) {
		assert.Equal(t, b.ID(), evicted.ID)
	}
	assert.Equal(t, []uint64{a.ID(), d.ID(), e.ID()}, f.Queue())
}

package faultswitch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reset empties the registry for one test and restores it after.
func reset(t *testing.T) {
	saved := switches
	switches = nil
	t.Cleanup(func() { switches = saved })
}

func TestWithoutSwitchesEveryFaultOffAndBackOn(t *testing.T) {
	reset(t)
	assert.False(t, Registered(), "nothing registered")
	a, b := "fault-a", "fault-b"
	for _, v := range []*string{&a, &b} {
		m := *v
		Register(func(on bool) {
			if on {
				*v = m
			} else {
				*v = ""
			}
		})
	}
	require.True(t, Registered())
	Without(func() {
		assert.Equal(t, "", a, "inside Without every fault is off")
		assert.Equal(t, "", b)
	})
	assert.Equal(t, "fault-a", a, "after Without every fault is on again")
	assert.Equal(t, "fault-b", b)
}

func TestWithoutSwitchesBackOnAfterAPanic(t *testing.T) {
	reset(t)
	on := true
	Register(func(v bool) { on = v })
	assert.Panics(t, func() {
		Without(func() {
			assert.False(t, on)
			panic("the control run panicked")
		})
	})
	assert.True(t, on, "a panicking control run leaves the fault on again")
}

func TestRegisterRefusesNil(t *testing.T) {
	reset(t)
	assert.PanicsWithValue(t, "faultswitch: Register(nil)", func() { Register(nil) })
	assert.False(t, Registered())
}
